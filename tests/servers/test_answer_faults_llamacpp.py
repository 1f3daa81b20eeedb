"""Server answers that break their schema or the request, planted by the fault proxy in front of the real
llama-server: each stops the run `not-run` (exit 2) naming the field and the value, never `divergent`; a record
run seals no reference from it; garbage from a startup probe is refused before any completion request (exit 4);
a stream kept open past --request-timeout is stopped by the total deadline. docs/faults.md lists them."""

from __future__ import annotations

import fnmatch
import json
import time

import pytest

from conftest import NO_WARMUP
from proxy import FaultProxy, StreamFault

pytestmark = pytest.mark.slow

USAGE, INTERRUPTED = pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERRUPTED
VOCAB = 49152  # SmolLM2's, as llama-server states it in /v1/models meta.n_vocab


def _literal(text: str) -> str:
    """text as an fnmatch pattern that matches it literally."""
    return "".join(f"[{c}]" if c in "[]*?" else c for c in text)


def _on_second(change, *, final: bool = False, event: int = 3):
    """A rewrite_chunk that changes the 2nd /completion's `event`-th event (final: its last one)."""
    def rewrite(chunk: dict, ctx: dict):
        if ctx.get("index") != 2:
            return chunk
        ctx["events"] = ctx.get("events", 0) + 1
        hit = chunk.get("stop") if final else ctx["events"] == event
        return change(chunk) if hit else chunk
    return rewrite


def _stopped_not_run(result, said: str) -> dict:
    """Exit 2 at the 2nd prompt, the message naming what was wrong, the first record and a partial report kept."""
    out = result.stdout.str()
    assert result.ret == INTERRUPTED, out[-3000:]
    result.stdout.fnmatch_lines([f"*the run stopped midway: prompt 'code-hashmap' (boot1-c1, request 2 of 3): "
                                 f"{_literal(said)}*"])
    result.stdout.fnmatch_lines(["*= 1 passed, 4 not-run in *"])
    assert "divergent" not in out and "Traceback" not in out
    rep = json.loads((result.folder / "identity.json").read_text())
    assert rep["verdict"] == "partial" and said in rep["interruption"]
    assert rep["missing"] == ["code-hashmap", "math-derivative"]
    assert sorted(p.name for p in (result.folder / "records" / "boot1-c1").iterdir()) == [
        "code-palindrome.json", "code-palindrome.npz"]
    return rep


SCHEMA = "POST /completion: the server's answer breaks its schema: "
GARBAGE = {
    "a-list": (_on_second(lambda c: [c]), SCHEMA + "the answer is [{"),
    "object-ids": (_on_second(lambda c: c | {"tokens": [{"id": t} for t in c["tokens"]]}),
                   SCHEMA + "field tokens[0] = {\"id\": "),
    "timings-a-list": (_on_second(lambda c: c | {"timings": [1, 2]}, final=True),
                       SCHEMA + "field timings = [1, 2] (Expected `object`, got `array`)"),
    "draft-n-null": (_on_second(lambda c: c | {"timings": c["timings"] | {"draft_n": None}}, final=True),
                     SCHEMA + "field timings.draft_n = null (Expected `int`, got `null`)"),
    "negative-id": (_on_second(lambda c: c | {"tokens": [-5]}), SCHEMA + "field tokens[0] = -5 (Expected `int` >= 0)"),
    "id-beyond-vocab": (_on_second(lambda c: c | {"tokens": [VOCAB + 7]}),
                        "the answer to prompt 'code-hashmap': the server's answer breaks the request: field "
                        f"completion token 2 = {VOCAB + 7} is outside the vocabulary's {VOCAB} ids (0..{VOCAB - 1})"),
    "text-without-ids": (_on_second(lambda c: c | {"tokens": [], "content": "planted"}),
                         "POST /completion: the server's answer breaks the request: an event with text 'planted' "
                         "and no token ids (field tokens is empty; return_tokens was asked) after 2 tokens"),
    "unknown-stop-type": (_on_second(lambda c: c | {"stop_type": "exploded"}, final=True),
                          SCHEMA + "field stop_type: stop reason 'exploded' is neither a stop nor the length limit"),
    # The ids kept, one piece of text changed: a real server never answers so (its text is its ids' text).
    "text-not-its-ids": (_on_second(lambda c: c | {"content": "planted"}),
                         "the answer to prompt 'code-hashmap': the server's answer breaks its own ids: field text = "),
}


@pytest.mark.parametrize("kind", list(GARBAGE))
def test_an_answer_of_another_shape_stops_the_run_not_run_naming_field_and_value(gate_run, shared_server,
                                                                                shared_reference, kind):
    rewrite, said = GARBAGE[kind]
    with FaultProxy(shared_server.url, rewrite_chunk=rewrite) as proxy:
        result = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", f"--reference={shared_reference}", report=kind)
    _stopped_not_run(result, said)
    assert proxy.completions == 2  # nothing was retried


def _more_tokens(path: str, body: dict) -> dict:
    """The 2nd /completion asks the real server for 64 tokens past the end of generation (oracle asked 32): twice
    what oracle asked is enough to overrun it, and no more for a server that decodes on after the client has gone
    (with -np 1 the next gate's requests would wait behind it)."""
    if path.startswith("/completion"):
        _more_tokens.seen = getattr(_more_tokens, "seen", 0) + 1
        if _more_tokens.seen == 2:
            return body | {"n_predict": 64, "ignore_eos": True}
    return body


def test_a_record_run_fed_more_tokens_than_asked_seals_no_reference_and_keeps_the_records(gate_run, shared_server,
                                                                                          tmp_path):
    _more_tokens.seen = 0
    ref = tmp_path / "never-sealed"
    with FaultProxy(shared_server.url, rewrite_request=_more_tokens) as proxy:
        result = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", f"--record={ref}", report="more-tokens")
    # The stream ended at token 33: the other 31 tokens the server was asked for were never read.
    rep = _stopped_not_run(result, "POST /completion: the server's answer breaks the request: 33 completion tokens "
                                   "(and counting) for max_tokens 32")
    assert not ref.exists() and rep["mode"] == "record"
    result.stdout.fnmatch_lines([f"*no reference written to {ref}*"])


def test_a_record_run_fed_text_that_is_not_its_ids_seals_no_reference(gate_run, shared_server, tmp_path):
    ref = tmp_path / "never-sealed"
    with FaultProxy(shared_server.url, rewrite_chunk=GARBAGE["text-not-its-ids"][0]) as proxy:
        result = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", f"--record={ref}", report="text-not-ids")
    rep = _stopped_not_run(result, GARBAGE["text-not-its-ids"][1])
    assert "'A hashplanted is a data struct'" in rep["interruption"] and "token ids detokenize to" in rep["interruption"]
    assert not ref.exists() and rep["mode"] == "record"


def test_real_answers_agree_with_their_ids_accents_and_end_of_generation_included(gate_run, shared_server,
                                                                                 tmp_path):
    """Every record's text is its ids' text as the real server answers: an accented word (two bytes, one token)
    and an answer that ends on <|im_end|>, whose text no server streams."""
    rows = [{"id": "cafe", "class": "chat", "messages": [{"role": "user", "content": "Write the word café five "
                                                                                      "times."}], "max_tokens": 16},
            {"id": "hi", "class": "chat", "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 64}]
    suite = tmp_path / "agree.jsonl"
    suite.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    ref = tmp_path / "agree-ref"
    result = gate_run(*NO_WARMUP, f"--oracle-url={shared_server.url}", f"--record={ref}", suite=suite, max_tokens=None,
                      report="agree")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    records = {p.stem: json.loads(p.read_text()) for p in (ref / "records" / "boot1-c1").glob("*.json")}
    assert "Café" in records["cafe"]["text"] and records["hi"]["finish_reason"] == "stop"


def test_a_character_over_several_tokens_is_refused_as_llama_server_streams_only_its_last_id(gate_run, shared_server,
                                                                                            tmp_path):
    """🎉 is three tokens; llama-server's stream gives only the last one's id: a record of those ids would be
    wrong, so the run stops not-run naming the count, and no reference is sealed."""
    rows = [{"id": "emoji", "class": "chat", "messages": [{"role": "user", "content": "Repeat exactly: 🎉🎉🎉🎉"}],
             "max_tokens": 8}]
    suite = tmp_path / "emoji.jsonl"
    suite.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    ref = tmp_path / "emoji-ref"
    result = gate_run(*NO_WARMUP, f"--oracle-url={shared_server.url}", f"--record={ref}", suite=suite, max_tokens=None,
                      report="emoji")
    assert result.ret == INTERRUPTED, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*prompt 'emoji' (boot1-c1, request 1 of 1): POST /completion: the server's answer "
                                 "breaks its own ids: field tokens gave 4 ids for timings.predicted_n 8 generated "
                                 "tokens (llama-server gives only the last id of a character that spans several "
                                 "tokens*"])
    assert not ref.exists() and "Traceback" not in result.stdout.str()


def test_a_stream_kept_open_by_comments_ends_at_the_total_request_timeout(gate_run, shared_server):
    # The first request, after its first token: the real server's speed (a loaded machine) cannot decide the test.
    fault = StreamFault(request_index=1, after_events=1, kind="keep-alive")
    with FaultProxy(shared_server.url, stream_fault=fault) as proxy:
        started = time.monotonic()
        # 10 s: the first token comes within a second on CI (prompt eval of ~70 tokens); the deadline is waited out.
        result = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", "--request-timeout=10", report="keep-alive")
    assert time.monotonic() - started < 300  # not the server's own end: the proxy's comments never stop
    said = (f"POST {proxy.url}/completion: the server sent no token for * s after 1 tokens (keep-alive comments are "
            "not tokens), and the request reached --request-timeout 10 s in all: it hangs, or needs a longer "
            "--request-timeout (raise it with --request-timeout 40 if the server is only slow)")
    assert result.ret == INTERRUPTED, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines([f"*the run stopped midway: prompt 'code-palindrome' (boot1-c1, request 1 of 3): "
                                 f"{said}*"])
    rep = json.loads((result.folder / "identity.json").read_text())
    assert rep["verdict"] == "partial" and fnmatch.fnmatch(rep["interruption"], f"*{said}*") and proxy.completions == 1


STARTUP = {
    "props-a-list": ("/props", [1, 2], "GET /props: the server's answer breaks its schema: the answer is [1, 2] "
                                       "(Expected `object`, got `array`)"),
    "props-n-ctx-a-string": ("/props", {"default_generation_settings": {"n_ctx": "big"}},
                             "GET /props: the server's answer breaks its schema: field default_generation_settings."
                             "n_ctx = \"big\" (Expected `int | null`, got `str`)"),
    "tokenize-strings": ("/tokenize", {"tokens": ["a", "b"]},
                         "POST /tokenize: the server's answer breaks its schema: field tokens[0] = \"a\""),
    "models-a-list": ("/v1/models", [{"id": "m"}], "GET /v1/models: the server's answer breaks its schema: the "
                                                   "answer is [{\"id\": \"m\"}] (Expected `object`, got `array`)"),
}


@pytest.mark.parametrize("kind", list(STARTUP))
def test_garbage_from_a_startup_probe_is_refused_before_any_completion_request(gate_run, shared_server, kind):
    route, answer, said = STARTUP[kind]
    with FaultProxy(shared_server.url, answer=lambda path, body: (200, answer) if path == route else None) as proxy:
        result = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", report=kind)
    assert result.ret == USAGE, result.stdout.str()[-3000:]
    err = result.stderr.str()
    assert "the server's answer at start is not what its API declares, so nothing was sent to it: " in err
    assert said in err and "Traceback" not in err + result.stdout.str()
    assert proxy.completions == 0 and not (result.folder / "records").exists()
    rep = json.loads((result.folder / "identity.json").read_text())
    assert rep["verdict"] == "partial" and said in rep["interruption"]


def test_a_greedy_gate_at_another_max_tokens_is_refused_before_any_request(gate_run, shared_server, shared_reference):
    with FaultProxy(shared_server.url) as proxy:
        result = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", f"--reference={shared_reference}", max_tokens=16,
                          report="other-length")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines([f"*--reference {shared_reference}: the reference was recorded with --max-tokens 32 "
                                 "and this gate asks for --max-tokens 16: completions of other lengths cannot be "
                                 "compared token for token; gate with --max-tokens 32, or re-record the reference "
                                 "with --max-tokens 16*"])
    assert proxy.completions == 0


def test_logprobs_above_the_served_vocabulary_is_refused_before_any_request(gate_run, shared_server):
    """SmolLM2 has 49152 tokens: a top-k above it is refused once the server states its vocabulary, before the
    warm-up or any completion request; the whole vocabulary (49152) is a top-k a runner's raw cosine asks for."""
    with FaultProxy(shared_server.url) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", "--logprobs=60000", report="top-k")
    assert result.ret == USAGE, result.stdout.str()[-3000:]
    result.stderr.fnmatch_lines(["*--logprobs 60000: the served vocabulary has 49152 tokens; give at most "
                                 "--logprobs 49152 (the whole vocabulary)*"])
    assert proxy.completions == 0 and "Traceback" not in result.stdout.str() + result.stderr.str()
