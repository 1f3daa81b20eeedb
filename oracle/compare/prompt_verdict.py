"""One prompt's item of the primary run judged against the reference: the code the gate's `tokens[ID]` items and the
ledger's audit both run, so that a verdict re-derived from a report's records is the gate's own.

    check = judge_prompt("p1", reference_record, candidate_record, near_tie_nats=0.5, sampled=False,
                         envelope=None, distribution=False, decode=prompts.decode)   # decode None: no split view
"""

from __future__ import annotations

from typing import Callable

from oracle.backends.base import IDS_FROM_TEXT
from oracle.compare.noise import NoiseEnvelope
from oracle.compare.splits import describe_split, split_view
from oracle.compare.logprobs import compare_logprobs
from oracle.compare.text import text_check
from oracle.compare.tokens import TokenSide, compare_tokens
from oracle.compare.verdicts import EXACT, INFO, LOGPROBS_MOVED, WITHIN_NOISE, Check

__all__ = ["judge_prompt"]


def judge_prompt(pid: str, ref, rec, *, near_tie_nats: float, sampled: bool, envelope: NoiseEnvelope | None,
                 distribution: bool, decode: Callable[[list[int]], str] | None, logprobs: bool = False) -> Check:
    """The prompt's check, `tokens[pid]`: exact, near-tie, divergent, within the reference's own noise (its envelope covers the
    split), text compared where either side has no ids; under `--sampling-check distribution` a split is
    reported only (INFO). decode: the tokenizer's, for the split's lines and view (None: the verdict alone).
    logprobs (`--oracle-compare logprobs`): equal tokens whose returned logprobs are not bit for bit equal are
    `logprobs-moved`."""
    check = _judged(f"tokens[{pid}]", pid, ref, rec, near_tie_nats=near_tie_nats, sampled=sampled, envelope=envelope,
                    decode=decode, logprobs=logprobs)
    if sampled and distribution and check.verdict != EXACT:
        # Tokens may differ by design (speculation under sampling): the sampling-distribution item judges.
        check.verdict, check.detail = INFO, check.detail + " (reported only: --sampling-check distribution)"
    return check


def _judged(cid: str, pid: str, ref, rec, *, near_tie_nats: float, sampled: bool, envelope: NoiseEnvelope | None,
            decode: Callable[[list[int]], str] | None, logprobs: bool = False) -> Check:
    if IDS_FROM_TEXT in (rec.ids_source, ref.ids_source):
        return text_check(cid, ref, rec)
    result = compare_tokens(TokenSide.of(ref), TokenSide.of(rec), near_tie_nats=near_tie_nats, sampled=sampled)
    evidence = {"first_divergence": result.first_divergence, "reference_length": result.reference_length,
                "candidate_length": result.candidate_length, "reference_token": result.reference_token,
                "candidate_token": result.candidate_token, "margin_nats": result.margin_nats,
                "reason": result.reason, "condition": rec.condition.key}
    if result.verdict == EXACT:
        same = f"{len(rec.completion_ids)}/{len(ref.completion_ids)} tokens identical, finish {rec.finish_reason}"
        if logprobs:  # tokens equal: are the returned logprobs too?
            moved = compare_logprobs(TokenSide.of(ref), TokenSide.of(rec))
            evidence["logprobs"] = moved.as_json()
            if not moved.equal:
                return Check(cid, "tokens", LOGPROBS_MOVED, f"{same}; {moved.describe()}",
                             [f"{pid}: {moved.describe()}"], evidence)
            same += f"; {moved.describe()}"
        return Check(cid, "tokens", EXACT, same, [], evidence)
    where = ("finish reason" if result.first_divergence is None
             else f"first divergence at token {result.first_divergence}")
    detail = f"{where} of {len(ref.completion_ids)} ({result.reason})"
    lines = []
    if decode is not None:
        lines = describe_split(ref, rec, result, decode)
        evidence["split"] = split_view(ref, rec, result.first_divergence, decode)
    if envelope and envelope.covers(pid, result.split_position):
        varies = envelope.varies[pid]
        return Check(cid, "tokens", WITHIN_NOISE, f"{detail}; the reference itself varies on this prompt from token "
                     f"{varies['first_position']} ({', '.join(varies['conditions'])})", lines, evidence)
    return Check(cid, "tokens", result.verdict, detail, lines, evidence)
