"""Canaries compared token for token: each canary request's completion (token ids, finish reason, top-k logprobs)
is kept in the report and in a reference recorded by the run (records/canaries/, reference schema 2); a gate
compares each canary's complete token array with the reference's by the suite's own rule (`compare/tokens.py`:
exact, near-tie, divergent), in addition to the canary's objective verdict.

    kept = completion_json(completion)                       # identity.json `canary_completions[item]`
    found = compare_canary("needle[512-d0]", row, completion, reference, near_tie_nats=0.5, decode=decode)
    found.check    # Check("needle[512-d0]:tokens", "canary-tokens", "divergent", ...) or None: not compared
    found.row      # the canary row's `tokens_vs_reference`
    found.note     # (head, item) for the report's notes when not compared, else None

A needle answered right with other tokens is `divergent` (or `near-tie`), named with its length, depth and the
position of the split. A reference that holds no completion of the canary (recorded before this, schema 1, or
without that canary) is not compared: the notes list it with the re-record command; it is not a failure.
The crosstalk canary is not compared here: each of its waves is compared with its own requests sent alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from oracle.canary.results import REPORT_KEY, TOKENS_KEY
from oracle.compare.tokens import TokenComparison, TokenSide, compare_tokens
from oracle.compare.verdicts import EXACT, Check
from oracle.store.records import PRIMARY, Record

__all__ = ["CHECK_KIND", "COMPARED_FAMILIES", "COMPLETIONS_KEY", "CanaryTokens", "NOT_COMPARED",
           "NOT_COMPARED_HEAD", "TOKENS_KEY", "compare_canary", "completion_json", "completion_record",
           "tokens_check_id"]

COMPLETIONS_KEY = "canary_completions"  # identity.json: item id -> its completion (the reference's source)
CHECK_KIND = "canary-tokens"
NOT_COMPARED = "not-compared"
COMPARED_FAMILIES = ("code", "needle", "repeats", "burst")  # the canaries with one completion to compare
NOT_COMPARED_HEAD = "canaries not compared token for token"
_FIELDS = ("completion_ids", "finish_reason", "text", "logprobs", "top_ids", "top_logprobs", "ids_source")


def tokens_check_id(item_id: str) -> str:
    return f"{item_id}:tokens"


def completion_json(completion) -> dict:
    """What is kept of a canary request's completion (a backend's Completion): what a token comparison reads."""
    return {name: getattr(completion, name) for name in _FIELDS}


def completion_record(item_id: str, kept: dict, prompt_ids: list[int] | None = None) -> Record:
    """The completion as a record of the reference (records/canaries/boot1-c1/)."""
    return Record(id=item_id, condition=PRIMARY, prompt_ids=list(prompt_ids or []),
                  **{k: kept[k] for k in _FIELDS if k in kept})


@dataclass(frozen=True)
class CanaryTokens:
    row: dict | None  # the canary row's `tokens_vs_reference`; None: no reference to compare with
    check: Check | None = None  # judged beside the canary's own check; None: nothing compared
    note: tuple[str, str] | None = None  # (head, item id) for the report's notes when not compared


def _subject(item_id: str, row: dict) -> str:
    """How the split is named: a needle by its length and depth, others by their item id."""
    if row.get("family") == "needle" and "length" in row:
        return f"the {row['length']}-token needle at depth {row.get('depth')}%"
    return item_id


def _token(decode: Callable | None, token: int | None) -> str:
    if token is None:
        return "(none)"
    if decode is None:
        return str(token)
    try:
        return f"{token} {decode([token])!r}"
    except Exception:  # a token the tokenizer cannot show: its id says enough
        return str(token)


def _detail(item_id: str, row: dict, found: TokenComparison, decode: Callable | None) -> str:
    answer = "answered right" if row.get("ok") else "answered wrong" if row.get("ok") is False else "ran"
    if found.exact:
        return f"{_subject(item_id, row)}: the reference's {found.reference_length} tokens, exactly"
    at = found.split_position
    margin = f", margin {found.margin_nats:.3f} nats" if found.margin_nats is not None else ""
    return (f"{_subject(item_id, row)} {answer} with other tokens than the reference: first split at completion "
            f"token {at} of {found.reference_length} (reference {_token(decode, found.reference_token)}, got "
            f"{_token(decode, found.candidate_token)}){margin}: {found.reason}")


def _not_compared(reference, item_id: str, why: str) -> CanaryTokens:
    rerecord = f"`pytest --backend=... --record {reference.path} --record-overwrite`"
    head = (f"{NOT_COMPARED_HEAD} (the reference {reference.path} {why}; re-record it with {rerecord} to compare "
            "them)")
    return CanaryTokens({"verdict": NOT_COMPARED, "why": f"the reference {why}"}, None, (head, item_id))


def compare_canary(item_id: str, row: dict, completion: dict, reference, *, near_tie_nats: float,
                   decode: Callable | None = None) -> CanaryTokens:
    """The canary's completion (`completion_json`) against the reference's (None: no reference, nothing to say)."""
    if reference is None or row.get("family") not in COMPARED_FAMILIES:
        return CanaryTokens(None)
    if not reference.keeps_side_records:
        return _not_compared(reference, item_id, "was recorded before oracle kept canary completions (schema 1)")
    recorded = reference.side_record(REPORT_KEY, item_id)
    if recorded is None:
        return _not_compared(reference, item_id, "holds no completion of this canary")
    found = compare_tokens(TokenSide.of(recorded), TokenSide.of(completion_record(item_id, completion)),
                           near_tie_nats=near_tie_nats)
    detail = _detail(item_id, row, found, decode)
    split = {"verdict": found.verdict, "first_divergence": found.first_divergence,
             "reference_length": found.reference_length, "candidate_length": found.candidate_length,
             "reference_token": found.reference_token, "candidate_token": found.candidate_token,
             "margin_nats": found.margin_nats, "reason": found.reason, "detail": detail}
    split |= {k: row[k] for k in ("length", "depth") if row.get("family") == "needle" and k in row}
    if found.verdict == EXACT:
        split = {k: split[k] for k in ("verdict", "reference_length", "detail")}
    return CanaryTokens(split, Check(tokens_check_id(item_id), CHECK_KIND, found.verdict, detail, [], dict(split)))
