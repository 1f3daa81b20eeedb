"""Verdicts and the one table that maps them to pass or fail (see DESIGN.md).

    check = Check(id="tokens[code-palindrome]", kind="tokens", verdict="near-tie", detail="...")
    passed(check, allow_near_ties=False, allow_inconclusive=())  # False
    passed(Check("ladder[c8]", "ladder", LOGPROBS_MOVED), allow_near_ties=False, allow_inconclusive=(),
           allow_logprobs_moved=True)  # True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["Check", "EXACT", "LOGPROBS_MOVED", "NEAR_TIE", "DIVERGENT", "WITHIN_NOISE", "INCONCLUSIVE", "PASS", "FAIL",
           "INFO", "NOT_RUN", "DROPPED", "CONTAMINATED", "CONSISTENT", "SHIFTED", "INSUFFICIENT", "MAX_MESSAGE_LINES",
           "passed"]

EXACT = "exact"
NEAR_TIE = "near-tie"
# --oracle-compare logprobs: every token equal, some returned logprob not bit-identical (as float32); fails unless
# --allow-logprobs-moved.
LOGPROBS_MOVED = "logprobs-moved"
DIVERGENT = "divergent"
WITHIN_NOISE = "within-reference-noise"
INCONCLUSIVE = "inconclusive"
PASS = "pass"  # a check proven right that is not a token comparison (cache-zero, speculation, recorded)
FAIL = "fail"
INFO = "info"  # reported, never gating (a canary wrong with no reference)
NOT_RUN = "not-run"  # the run stopped before this item's request finished
DROPPED = "dropped"  # a canary beyond what the server really holds (found at start): not sent, passes, listed
CONTAMINATED = "contaminated"  # another concurrent request's content in a completion (crosstalk canary)
# The sampled distribution check (compare/distribution.py): no shift found with the power asked for; a shift
# found; too few tokens to detect --max-shift (fails like inconclusive; passes with --allow-inconclusive sampling).
CONSISTENT, SHIFTED, INSUFFICIENT = "consistent", "shifted", "insufficient"
MAX_MESSAGE_LINES = 24  # of a failed item's message (gate items and canaries); the rest is in identity.json


@dataclass
class Check:
    id: str
    kind: str  # tokens, cache, speculation, record, ...
    verdict: str
    detail: str = ""
    lines: list[str] = field(default_factory=list)  # bounded extra lines for the failure message
    evidence: dict = field(default_factory=dict)
    outcome: str = ""  # "passed" / "failed", filled when the item is judged
    inconclusive_kind: str = ""  # the --allow-inconclusive kind that passes it, when not its own kind

    def as_dict(self) -> dict:
        return asdict(self)


def passed(check: Check, *, allow_near_ties: bool, allow_inconclusive: tuple[str, ...],
           allow_logprobs_moved: bool = False) -> bool:
    v = check.verdict
    if v == CONTAMINATED:  # a serving bug, not noise: no near-tie or inconclusive allowance excuses it
        return False
    if v in (EXACT, PASS, WITHIN_NOISE, INFO, DROPPED, CONSISTENT):
        return True
    if v == NEAR_TIE:
        return allow_near_ties
    if v == LOGPROBS_MOVED:
        return allow_logprobs_moved
    if v in (INCONCLUSIVE, INSUFFICIENT):
        return (check.inconclusive_kind or check.kind) in allow_inconclusive
    return False  # divergent, fail, not-run, shifted
