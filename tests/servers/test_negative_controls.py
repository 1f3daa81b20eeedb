"""Negative controls through the gate: a real llama-server behind a FaultProxy that plants one known fault, and
the gate must name it with its exact verdict and exit code (a gate that passed everything would fail these)."""

from __future__ import annotations

import json
import re

import datasets  # noqa: F401  (imported here, outside pytester's in-process runs: pyarrow cannot load twice)
import pytest

from conftest import NO_WARMUP, write_suite
from oracle.store.reference import load_reference
from proxy import FaultProxy, change_token, pieces

pytestmark = pytest.mark.slow

NEAR_TIE_NATS = 0.5  # the --near-tie-nats default
ONE_PROMPT = [{"id": "chat-one", "class": "chat", "max_tokens": 8, "messages": [{"role": "user", "content": "Say hi."}]}]


def _esc(text: str) -> str:
    """fnmatch-escape the brackets of an item id."""
    return "".join({"[": "[[]", "]": "[]]"}.get(ch, ch) for ch in text)


def _checks(report: dict, kind: str) -> dict[str, dict]:
    return {c["id"]: c for c in report["checks"] if c["kind"] == kind}


# -- a. near-tie ---------------------------------------------------------------------------------------------
def _close_call(reference, prompt_ids: list[str]) -> tuple[str, int, int, int, float]:
    """The first position (suite order) where the reference chose its top-1 over a runner-up less than
    NEAR_TIE_NATS behind: (prompt, position, reference token, runner-up, margin)."""
    for pid in prompt_ids:
        rec = reference.record(pid)
        for i, (tid, ids, lps) in enumerate(zip(rec.completion_ids, rec.top_ids, rec.top_logprobs)):
            if len(ids) >= 2 and ids[0] == tid and lps[0] - lps[1] < NEAR_TIE_NATS:
                return pid, i, int(ids[0]), int(ids[1]), float(lps[0] - lps[1])
    raise AssertionError("the recorded reference has no close call below 0.5 nats in 96 positions")


def _plant_runner_up(prompt: list[int], position: int, runner_up: int):
    """Chunk rewriter: in the request for `prompt`, stream `runner_up` at `position` in place of the server's
    token, with the chosen-token logprob taken from the same top-k (the top-k itself is the server's). The
    server itself goes on from its own token, so only that one position differs."""

    def rewrite(chunk: dict, ctx: dict) -> dict:
        ids = chunk.get("tokens") or []
        start = ctx["tokens_seen"]
        ctx["tokens_seen"] += len(ids)
        if (ctx["body"] or {}).get("prompt") == prompt and start <= position < start + len(ids):
            k = position - start
            ids[k] = runner_up
            if "content" in chunk:  # the text follows the ids, as a server that chose the runner-up streams it
                chunk["content"] = pieces(ctx["proxy"].upstream, ids)
            probs = chunk.get("completion_probabilities") or []
            if k < len(probs):
                prob = probs[k]
                prob["id"] = runner_up
                prob["logprob"] = next(t["logprob"] for t in prob["top_logprobs"] if t["id"] == runner_up)
            ctx["planted"] = True
        return chunk

    return rewrite


def test_runner_up_planted_at_a_close_call_is_a_near_tie(gate_run, llama_server, tiny_suite, pytester, read_report):
    server = llama_server()
    gate_run(f"--oracle-url={server.url}", "--record=ref", report="rec").assert_outcomes(passed=5)
    ref = load_reference(pytester.path / "ref")
    prompts = [json.loads(line)["id"] for line in tiny_suite.read_text().splitlines()]
    pid, position, chosen, runner_up, margin = _close_call(ref, prompts)
    planted = _plant_runner_up([int(t) for t in ref.record(pid).prompt_ids], position, runner_up)
    with FaultProxy(server.url, rewrite_chunk=planted) as proxy:
        strict = gate_run(f"--oracle-url={proxy.url}", "--reference=ref", report="strict")
        allowed = gate_run(f"--oracle-url={proxy.url}", "--reference=ref", "--allow-near-ties", report="allowed")

    assert strict.ret == 1  # a near-tie fails without --allow-near-ties
    strict.assert_outcomes(passed=4, failed=1)
    strict.stdout.fnmatch_lines([f"*{_esc(f'tokens[{pid}]')}: near-tie: first divergence at token {position} of "
                                 f"{len(ref.record(pid).completion_ids)} (margin {margin:.3f} nats < 0.5 nats)*"])
    assert allowed.ret == 0  # ... and passes with it, still reported as a near-tie
    allowed.assert_outcomes(passed=5)
    for result in (strict, allowed):
        rep = read_report(result.folder)
        tokens = _checks(rep, "tokens")
        assert {cid: c["verdict"] for cid, c in tokens.items()} == {
            f"tokens[{p}]": ("near-tie" if p == pid else "exact") for p in prompts}
        ev = tokens[f"tokens[{pid}]"]["evidence"]
        assert (ev["first_divergence"], ev["reference_token"], ev["candidate_token"]) == (position, chosen, runner_up)
        assert ev["margin_nats"] == pytest.approx(margin, abs=1e-9)
        assert rep["summary"]["near_tie"] == 1 and rep["summary"]["exact"] == [2, 3]
    assert read_report(strict.folder)["verdict"] == "fail" and read_report(allowed.folder)["verdict"] == "pass"


# -- b. text compared (openai family, no ids) -----------------------------------------------------------------
def _text_only_with_a_change(prompt: list[int], piece: int, planted: dict):
    """Chunk rewriter for /v1/completions: drop every choice's logprobs (so no token ids reach the gate: text is
    compared), and in the request for `prompt` put '#' before its `piece`-th non-empty text piece;
    planted["at"] gets the character offset of the change."""

    def rewrite(chunk: dict, ctx: dict) -> dict:
        for choice in chunk.get("choices") or []:
            choice.pop("logprobs", None)
            text = choice.get("text") or ""
            if not text or (ctx["body"] or {}).get("prompt") != prompt:
                continue
            ctx.setdefault("pieces", 0)
            ctx.setdefault("chars", 0)
            if ctx["pieces"] == piece:
                choice["text"] = "#" + text
                planted["at"] = ctx["chars"]
            ctx["pieces"] += 1
            ctx["chars"] += len(text)
        return chunk

    return rewrite


def test_text_compared_on_a_server_without_ids_fails_a_changed_text(gate_run, llama_server, tiny_suite, pytester,
                                                                    read_report):
    server = llama_server()
    rec = gate_run("--backend=openai", f"--oracle-url={server.url}", "--record=ref", report="rec")
    rec.assert_outcomes(passed=5)
    prompts = [json.loads(line)["id"] for line in tiny_suite.read_text().splitlines()]
    changed = prompts[1]
    ref = load_reference(pytester.path / "ref")
    assert ref.record(changed).ids_source == "server"  # the reference has ids; the candidate will not
    planted: dict = {}
    rewrite = _text_only_with_a_change([int(t) for t in ref.record(changed).prompt_ids], 5, planted)
    with FaultProxy(server.url, rewrite_chunk=rewrite) as proxy:
        result = gate_run("--backend=openai", f"--oracle-url={proxy.url}", "--reference=ref", report="text")
    at = planted["at"]  # the 6th text piece of that prompt's answer
    assert result.ret == 1
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines([f"*{_esc(f'tokens[{changed}]')}: divergent: compared text, not token ids: the "
                                 f"server returned no ids; text differs from character {at}*"])
    rep = read_report(result.folder)
    tokens = _checks(rep, "tokens")
    assert {cid: c["verdict"] for cid, c in tokens.items()} == {
        f"tokens[{p}]": ("divergent" if p == changed else "exact") for p in prompts}
    assert all(c["evidence"]["compared"] == "text" for c in tokens.values())
    bad = tokens[f"tokens[{changed}]"]
    assert bad["evidence"]["first_divergence_character"] == at and bad["outcome"] == "failed"
    assert bad["evidence"]["candidate_characters"] == bad["evidence"]["reference_characters"] + 1
    assert rep["evidence"]["token_ids"] == "none for 3 of 3 requests: text compared"
    assert rep["verdict"] == "fail" and rep["summary"]["divergent"] == 1


# -- c. needle ------------------------------------------------------------------------------------------------
NEEDLE = ["--canaries=needle", "--needle-lengths=1K", "--needle-depths=50"]


def _bump_first_digit(prompt_length: int):
    """Chunk rewriter: in the request whose prompt has `prompt_length` tokens (the needle), the first digit of
    the streamed answer becomes the next digit (9 -> 0)."""

    def rewrite(chunk: dict, ctx: dict) -> dict:
        content = chunk.get("content") or ""
        m = re.search(r"\d", content)
        if m and not ctx.get("done") and len((ctx["body"] or {}).get("prompt") or []) == prompt_length:
            d = str((int(m.group(0)) + 1) % 10)
            chunk["content"] = content[:m.start()] + d + content[m.end():]
            ctx["done"] = True
        return chunk

    return rewrite


def test_needle_answer_with_a_changed_digit_is_a_regression(gate_run, llama_server, tmp_path, read_report):
    suite = write_suite(tmp_path, "one", ONE_PROMPT)
    server = llama_server()
    rec = gate_run(f"--oracle-url={server.url}", "--record=ref", *NEEDLE, suite=suite, report="rec", max_tokens=None)
    rec.assert_outcomes(passed=4)  # record[chat-one], cache-zero, speculation, needle[1024-d50]
    right = read_report(rec.folder)["canaries"]["needle[1024-d50]"]
    assert (right["verdict"], right["extracted"]) == ("pass", right["expected"])  # the reference got it right
    value = right["expected"]
    changed = str((int(value[0]) + 1) % 10) + value[1:]
    with FaultProxy(server.url, rewrite_chunk=_bump_first_digit(1024)) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", "--reference=ref", *NEEDLE, suite=suite, report="gate",
                          max_tokens=None)
    assert result.ret == 1
    result.assert_outcomes(passed=3, failed=1)  # the gate's own items pass: only the needle answer changed
    result.stdout.fnmatch_lines([f"*needle[[]1024-d50[]]: fail: wrong: returned {changed}, the needle holds "
                                 f"{value}*regression: the reference answered it right*"])
    row = read_report(result.folder)["canaries"]["needle[1024-d50]"]
    assert (row["ok"], row["verdict"], row["answer"]) == (False, "fail", "wrong")
    assert (row["expected"], row["extracted"]) == (value, changed)
    assert row["why"] == "regression: the reference answered it right"
    assert row["reference"] == {"ok": True, "extracted": value, "expected": value}


# -- d. sequential repeats --------------------------------------------------------------------------------------
def test_sequential_repeat_through_a_proxy_that_changes_one_request_fails(gate_run, llama_server, tmp_path,
                                                                          read_report):
    suite = write_suite(tmp_path, "one", ONE_PROMPT)
    server = llama_server()
    args = ("--canaries=repeats", "--repeats=3")
    # Requests: 1 suite prompt, then the 3 sequential repeats: the 3rd request is the 2nd repeat.
    with FaultProxy(server.url, rewrite_chunk=change_token(request_index=3, position=3)) as proxy:
        strict = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", *args, "--canary-strict", suite=suite, report="strict",
                          max_tokens=16)
    assert strict.ret == 1
    strict.assert_outcomes(passed=4, failed=1)
    strict.stdout.fnmatch_lines(["*repeats[[]sequential[]]: fail: 2/3 identical, 2 unique outputs; request 2: "
                                 "first divergence at token 3 (*wrong, and --canary-strict fails wrong canaries*"])
    rows = read_report(strict.folder)["canaries"]
    seq = rows["repeats[sequential]"]["repeats"]
    assert (seq["n"], seq["unique"], seq["identical"], seq["baseline_index"]) == (3, 2, 2, 0)
    assert [(o["index"], o["first_divergence"]) for o in seq["outliers"]] == [(1, 3)]
    assert seq["outliers"][0]["outlier_token"] == seq["outliers"][0]["baseline_token"] + 1  # the planted +1
    assert rows["repeats[sequential]"]["verdict"] == "fail"
    assert rows["repeats[burst]"]["verdict"] == "pass" and rows["repeats[burst]"]["repeats"]["unique"] == 1

    # The same fault without --canary-strict and without a reference: information (DESIGN's canary rows), exit 0.
    with FaultProxy(server.url, rewrite_chunk=change_token(request_index=3, position=3)) as proxy:
        lenient = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", *args, suite=suite, report="lenient", max_tokens=16)
    assert lenient.ret == 0
    lenient.assert_outcomes(passed=5)
    row = read_report(lenient.folder)["canaries"]["repeats[sequential]"]
    assert (row["ok"], row["verdict"]) == (False, "info")
    assert row["why"] == "wrong, reported as information (no reference; --canary-strict fails it)"


# -- e. speculation declared, no counters -----------------------------------------------------------------------
def test_declared_speculation_on_a_server_without_counters_is_inconclusive(gate_run, llama_server, read_report):
    server = llama_server(metrics=False)  # no --metrics, no speculation: no draft counts anywhere
    # cache-zero is inconclusive too without --metrics: allowed here, so that speculation is the one failure.
    result = gate_run(f"--oracle-url={server.url}", "--speculative", "--allow-inconclusive=cache", report="nocounters")
    assert result.ret == 1
    assert result.parseoutcomes() == {"passed": 4, "inconclusive": 1}  # a failed inconclusive has its own status
    result.stdout.fnmatch_lines(["oracle::speculation INCONCLUSIVE",
                                 "*speculation: inconclusive: speculation not proven: the server reported no draft "
                                 "counters*"])
    rep = read_report(result.folder)
    spec = _checks(rep, "speculation")["speculation"]
    assert (spec["verdict"], spec["outcome"]) == ("inconclusive", "failed")
    assert spec["evidence"]["drafted"] is None and spec["evidence"]["declared"] is True
    assert spec["evidence"]["server_config"] is None
    cache = _checks(rep, "cache")["cache-zero"]
    assert (cache["verdict"], cache["outcome"]) == ("inconclusive", "passed")
    # Allowing speculation too passes the same run: that item was the only failure.
    allowed = gate_run(f"--oracle-url={server.url}", "--speculative", "--allow-inconclusive=cache,speculation",
                       report="allowed")
    assert allowed.ret == 0
    allowed.assert_outcomes(passed=5)
