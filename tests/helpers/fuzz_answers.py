"""Generated server answers that no server following llama.cpp's API sends (tests/servers/
test_fuzz_server_answers.py answers them from tests/helpers/garbage_server.py).

    what, body = draw(completion_answers(max_tokens=32))   # a POST /completion stream
    route, what, body = draw(probe_answers())               # a /props or /tokenize answer at start
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from fuzz import json_values

# -- server answers ------------------------------------------------------------------------------------------

def _events(*events) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


def _final(**fields) -> dict:
    return {"content": "", "tokens": [], "stop": True, "stop_type": "limit", "tokens_predicted": 4,
            "timings": {"prompt_n": 3, "predicted_n": 4}} | fields


BAD_TOKEN_LISTS = [[-5], ["a"], [1.5], [2 ** 40], None, {"a": 1}, "7", [[1]], [True]]


@st.composite
def completion_answers(draw, max_tokens: int = 32) -> tuple[str, bytes]:
    """(what, the bytes of a POST /completion stream) that no server following llama.cpp's API sends for a
    request of max_tokens: garbage, JSON of another schema, fields of wrong types, more tokens than asked,
    an unknown stop type, text without token ids."""
    kind = draw(st.sampled_from(["bytes", "other-json", "wrong-tokens", "wrong-content", "too-many", "stop-type",
                                 "timings", "text-only"]))
    ok = {"content": "a", "tokens": [42], "stop": False}
    if kind == "bytes":
        body = draw(st.binary(max_size=60))
        return f"bytes {body!r}", body
    if kind == "other-json":
        value = draw(json_values().filter(lambda v: not isinstance(v, dict)))
        return f"an event that is {value!r}", _events(ok, value, _final())
    if kind == "wrong-tokens":
        tokens = draw(st.sampled_from(BAD_TOKEN_LISTS))
        return f"tokens {tokens!r}", _events(ok, dict(ok, tokens=tokens), _final())
    if kind == "wrong-content":
        content = draw(st.sampled_from([5, [], None, {"t": 1}]))
        return f"content {content!r}", _events(dict(ok, content=content), _final())
    if kind == "too-many":
        n = draw(st.integers(min_value=max_tokens + 1, max_value=4 * max_tokens))
        return f"{n} tokens for max_tokens {max_tokens}", _events(*[ok] * n, _final(tokens_predicted=n))
    if kind == "stop-type":
        stop_type = draw(st.sampled_from(["exploded", "", 3, None]))
        return f"stop_type {stop_type!r}", _events(ok, _final(stop_type=stop_type))
    if kind == "timings":
        timings = draw(st.sampled_from([[], "fast", {"prompt_n": "x"}, {"draft_n": None, "predicted_n": []}]))
        return f"timings {timings!r}", _events(ok, _final(timings=timings))
    return "text without token ids", _events({"content": "hello", "stop": False}, _final(tokens=None))


@st.composite
def probe_answers(draw) -> tuple[str, str, bytes]:
    """(route, what, the body of a 200 answer) for a start-up probe (/props, /tokenize) of a wrong shape."""
    route = draw(st.sampled_from(["/props", "/tokenize"]))
    value = draw(st.one_of(json_values(), st.just({"tokens": "abc"}), st.just({"tokens": [-1, "x"]}),
                           st.just({"default_generation_settings": []}), st.just({"n_ctx": "big"})))
    body = draw(st.one_of(st.just(json.dumps(value).encode()), st.binary(max_size=30)))
    return route, f"{route} answered {body[:80]!r}", body


# Chat templates a server's /props may carry (#52): not Jinja, Jinja that fails as it renders (a division by zero,
# the template's own raise_exception, an attribute the sandbox forbids, an undefined filter), and text that renders
# to prompts other than the reference's. Each must end in a usage error (4) before any request, never a traceback.
BAD_TEMPLATES = ["{% if %}", "{{ messages[0]['content'] ", "{% for m in messages %}{{ m.content }}", "{% endfor %}",
                 "{{ 1 / 0 }}", "{{ raise_exception('this template refuses these messages') }}",
                 "{{ messages.__class__.__mro__ }}", "{{ messages | nosuchfilter }}", "{{ messages[99].content }}",
                 "{% set x = x + 1 %}{{ x }}", "plain text, no markers", "{{ '' * 10 }}", "{#", "{{ none.x.y }}"]


@st.composite
def chat_templates(draw) -> str:
    """A chat template for /props that the gate cannot render into the reference's prompts."""
    return draw(st.one_of(st.sampled_from(BAD_TEMPLATES),
                          st.text(alphabet="{}%#()[]|'\". abmx=-+*/_0", min_size=1, max_size=40)))
