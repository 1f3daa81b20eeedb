"""Glue between canary modules and the gate session: render, send greedy token-id requests, judge.

    ids = render_ids(gate, messages, suffix="Output:")       # the run's own rendering and tokenizer
    completion = complete(gate, ids, max_tokens=8, top_k=gate.options.logprobs)   # one request, never retried
    finish_canary(gate, "code[mul-7-2]", "code", ok=True, result={...}, detail="answered 14", completion=completion)
    dropped(gate, request.node, "needle[8176-d50]", "needle", "beyond the server's context of 2048 tokens", {...})
"""

from __future__ import annotations

import asyncio
import time

import pytest

from oracle.backends import Completion, CompletionRequest
from oracle.canary.context import DROPPED_NOTE
from oracle.canary.results import REPORT_KEY, canary_verdict
from oracle.canary.tokens import COMPLETIONS_KEY, TOKENS_KEY, compare_canary, completion_json
from oracle.compare.verdicts import DROPPED, MAX_MESSAGE_LINES, NOT_RUN, Check
from oracle.store.records import token_sha256

__all__ = ["canary_result", "complete", "complete_many", "complete_wave", "dropped", "finish_canary",
           "not_run", "render_ids"]


def render_ids(gate, messages: list[dict], *, suffix: str = "") -> tuple[int, ...]:
    """The run's own rendering and tokenizer (the prompts the gate session rendered its suite with)."""
    return gate.prompts.render_ids(messages, suffix=suffix)


def canary_result(gate, item_id: str, row: dict) -> None:
    """Keep the item's row in the report's canaries (oracle/checks/canaries/state.py)."""
    gate.state.apply({REPORT_KEY: {item_id: row}})


def _request(gate, ids: tuple[int, ...], max_tokens: int, top_k: int = 0) -> CompletionRequest:
    return CompletionRequest(prompt_ids=tuple(ids), max_tokens=max_tokens, logprobs=top_k, seed=gate.options.seed)


def complete(gate, ids: tuple[int, ...], *, max_tokens: int, top_k: int = 0) -> Completion:
    """top_k: the top-k logprobs asked per position (the run's --logprobs for a canary compared token for token,
    so that a split can be judged a near-tie as the suite's are)."""
    return complete_many(gate, [ids], max_tokens=max_tokens, at_once=False, top_k=top_k)[0]


def complete_many(gate, prompts: list[tuple[int, ...]], *, max_tokens: int, at_once: bool,
                  top_k: int = 0) -> list[Completion]:
    """Send the prompts one after another, or all at once (a burst, one connection each)."""

    async def run() -> list[Completion]:
        n = len(prompts) if at_once else 1
        async with gate.backend.async_client(connections=n) as client:
            requests = [_request(gate, p, max_tokens, top_k) for p in prompts]
            if at_once:
                return list(await asyncio.gather(*(gate.backend.complete(client, r) for r in requests)))
            return [await gate.backend.complete(client, r) for r in requests]

    return asyncio.run(run())


def complete_wave(gate, prompts: list[tuple[int, ...]], *, max_tokens: int) -> list[tuple[float, Completion]]:
    """All prompts at once (one connection each), each with the wall-clock time its request was sent, so that
    its tokens' times place it on one clock with the others (the overlap proof, run/overlap.py)."""

    async def one(client, ids: tuple[int, ...]) -> tuple[float, Completion]:
        started = time.time()
        return started, await gate.backend.complete(client, _request(gate, ids, max_tokens))

    async def run() -> list[tuple[float, Completion]]:
        async with gate.backend.async_client(connections=len(prompts)) as client:
            return list(await asyncio.gather(*(one(client, p) for p in prompts)))

    return asyncio.run(run())


def _reference_canaries(gate) -> dict | None:
    ref = gate.plan.reference
    return None if ref is None else dict(ref.manifest.get("canaries") or {})


def finish_canary(gate, item_id: str, family: str, *, ok: bool, result: dict, detail: str, strict: bool,
                  lines: list[str] | None = None, completion: Completion | None = None) -> None:
    """Store the result in the report, judge it by the verdict table, fail the item if it must. completion: the
    canary's one completion, kept (a recorded reference keeps it) and, with a reference, compared token for token
    with the reference's (canary/tokens.py): a second check of the item, judged by the same table."""
    ref = _reference_canaries(gate)
    verdict, why = canary_verdict(ok=ok, item_id=item_id, reference=ref, strict=strict)
    ref_row = (ref or {}).get(item_id)
    row = {"family": family, "ok": ok, **result, "verdict": verdict, "why": why,
           "reference": None if ref_row is None else {k: ref_row.get(k) for k in ("ok", "extracted", "expected")
                                                        if k in ref_row}}
    tokens = None
    if completion is not None:
        kept = completion_json(completion)
        gate.state.apply({COMPLETIONS_KEY: {item_id: kept}})
        row["completion_sha256"] = token_sha256(completion.completion_ids)
        tokens = compare_canary(item_id, row, kept, gate.plan.reference, near_tie_nats=gate.options.near_tie_nats,
                                decode=gate.prompts.decode)
        if tokens.row is not None:
            row[TOKENS_KEY] = tokens.row
        if tokens.note is not None:
            gate.state.note_item(*tokens.note)
    canary_result(gate, item_id, row)
    check = Check(item_id, "canary", verdict, f"{detail} ({why})", list(lines or []),
                  {k: v for k, v in row.items() if k not in ("raw_text",)})
    msg = [] if gate.judge(check) else [f"{item_id}: {verdict}: {check.detail}", *(f"  {x}" for x in check.lines)]
    if tokens is not None and tokens.check is not None and not gate.judge(tokens.check):
        msg.append(f"{tokens.check.id}: {tokens.check.verdict}: {tokens.check.detail}")
    if msg:
        pytest.fail("\n".join(msg[:MAX_MESSAGE_LINES]), pytrace=False)


def not_run(gate, item_id: str, family: str, reason: str) -> None:
    """A request failed: the item is not-run (fails), and its reason is kept."""
    canary_result(gate, item_id, {"family": family, "ok": False, "verdict": NOT_RUN, "why": reason})
    gate.judge(Check(item_id, "canary", NOT_RUN, f"not run: {reason}"))
    pytest.fail(f"{item_id}: not run: {reason}"[:2000], pytrace=False)



def dropped(gate, node: pytest.Item, item_id: str, family: str, reason: str, result: dict) -> None:
    """The server cannot hold this item (found at start): never sent, `dropped` (passes), listed in the notes;
    a reference recorded by this run is written without it. The terminal shows it as DROPPED with the reason."""
    canary_result(gate, item_id, {"family": family, "ok": None, **result, "verdict": DROPPED, "why": reason})
    gate.state.note_item(DROPPED_NOTE.format(reason=reason), item_id)
    gate.judge(Check(item_id, "canary", DROPPED, f"dropped: {reason} (not sent)", [], dict(result)))
    node.user_properties += [("oracle_verdict", DROPPED), ("oracle_detail", reason)]
