"""The server's real context, fast layer: where each backend reads it, which needle lengths it cannot hold,
and the `dropped` status in verdicts, counts, notes and the reports (the real server: test_context_llamacpp.py)."""

from __future__ import annotations

import httpx
import pytest

from oracle.backends import make_backend
from oracle.backends.schemas import AnswerBroken
from oracle.canary.context import DROPPED_NOTE, ServedContext, beyond, context_words, unknown_note
from oracle.canary.needle import ANSWER_TOKENS
from oracle.canary.report import markdown_lines
from oracle.canary.results import canary_summary, family_counts
from oracle.compare.verdicts import DROPPED, NOT_RUN, Check, passed
from oracle.checks import SECTIONS
from oracle.report.html import render_html
from oracle.report.state import ReportState

SLOT = "llama-server /props default_generation_settings.n_ctx, the context of one slot"


def served(family: str, routes: dict[str, dict]) -> ServedContext:
    """The backend of `family` on a server that answers these GET routes with these JSON bodies."""
    def handler(request: httpx.Request) -> httpx.Response:
        body = routes.get(request.url.path)
        return httpx.Response(200, json=body) if body is not None else httpx.Response(404, json={})

    return ServedContext.read(make_backend(family, "http://test", transport=httpx.MockTransport(handler)))


def test_each_backend_reads_the_context_the_server_states():
    assert served("llamacpp", {"/props": {"default_generation_settings": {"n_ctx": 2048}}}) == ServedContext(2048, SLOT)
    models = {"data": [{"id": "m", "max_model_len": 4096}]}
    assert served("vllm-xpu", {"/v1/models": models}) == ServedContext(4096, "vLLM /v1/models max_model_len")
    assert served("openai", {"/v1/models": models}) == ServedContext(
        4096, "/v1/models max_model_len, when the server lists it")


def test_a_server_that_does_not_state_its_context_keeps_the_planned_lengths_and_says_so():
    plain = served("openai", {"/v1/models": {"data": [{"id": "m"}]}})
    assert plain == ServedContext(None, "the server does not state its context (/v1/models max_model_len, when "
                                        "the server lists it)")
    assert beyond(plain, 1_000_000) is None  # nothing dropped: sent as today
    assert unknown_note(plain).startswith("needle lengths were not checked against the server's real "
                                          "context: the server does not state its context")
    assert "give --oracle-context N" in unknown_note(plain)
    for odd in (0, -1, None):  # not a stated context
        assert served("llamacpp", {"/props": {"default_generation_settings": {"n_ctx": odd}}}).tokens is None
    for garbage in ("2048", True):  # another type: the answer breaks /props' schema, named (refused at start)
        with pytest.raises(AnswerBroken, match=r"GET /props: .*field default_generation_settings.n_ctx = "):
            served("llamacpp", {"/props": {"default_generation_settings": {"n_ctx": garbage}}})


def test_a_needle_is_beyond_the_context_when_its_answer_tokens_do_not_fit():
    ctx = ServedContext(2048, SLOT)
    assert beyond(ctx, 2048 - ANSWER_TOKENS) is None and unknown_note(ctx) is None
    assert beyond(ctx, 2048 - ANSWER_TOKENS + 1) == "beyond the server's context of 2048 tokens"
    assert beyond(ctx, 8176) == "beyond the server's context of 2048 tokens"
    assert context_words(ctx.as_json()) == f"2048 tokens ({SLOT})"
    assert context_words({"tokens": None, "source": "why"}) == "not known (why)" and context_words(None) is None


def test_dropped_passes_and_is_no_trial_in_the_counts():
    assert passed(Check("needle[8176-d50]", "canary", DROPPED), allow_near_ties=False, allow_inconclusive=())
    assert not passed(Check("needle[8176-d50]", "canary", NOT_RUN), allow_near_ties=False, allow_inconclusive=())
    reason = "beyond the server's context of 2048 tokens"
    rows = {"needle[1024-d50]": {"family": "needle", "ok": True, "verdict": "pass"},
            "needle[2048-d50]": {"family": "needle", "ok": None, "verdict": DROPPED, "why": reason},
            "needle[4096-d50]": {"family": "needle", "ok": None, "verdict": DROPPED, "why": reason}}
    assert canary_summary(rows) == "needle 1/1 (2 dropped)"
    assert family_counts(rows) == {"needle": (1, 1)}
    assert markdown_lines(rows)[1:] == [f"  - needle[2048-d50]: dropped: {reason} (not sent)",
                                        f"  - needle[4096-d50]: dropped: {reason} (not sent)"]
    only = {k: v for k, v in rows.items() if v["verdict"] == DROPPED}
    assert canary_summary(only) == "needle 0/0 (2 dropped)" and family_counts(only) == {}


def test_the_dropped_items_of_one_reason_share_one_note_in_every_report():
    state = ReportState(mode="record", backend="llamacpp")
    head = DROPPED_NOTE.format(reason="beyond the server's context of 2048 tokens")
    for item in ("needle[2048-d50]", "needle[4096-d50]", "needle[2048-d50]"):
        state.note_item(head, item)
    state.note("another note")
    state.note_item(DROPPED_NOTE.format(reason="beyond the server's context of 4096 tokens"), "needle[8176-d0]")
    assert state.notes == [
        "dropped, beyond the server's context of 2048 tokens (not sent; a reference recorded by this run is written "
        "without them): needle[2048-d50], needle[4096-d50]",
        "another note",
        "dropped, beyond the server's context of 4096 tokens (not sent; a reference recorded by this run is written "
        "without them): needle[8176-d0]"]
    state.closed = state.complete = True
    html = render_html(state.as_json(), SECTIONS)
    assert "<h2>Notes</h2>" in html and "needle[2048-d50], needle[4096-d50]</li>" in html
    assert "<h2>Notes</h2>" not in render_html(ReportState(mode="run", backend="llamacpp").as_json(), SECTIONS)
