"""A canary's answer judged by its family's rule, as the canary tests judge it (canaries/test_*.py call these), and
re-derived by the ledger's audit from what a report keeps of it: its completion's text (identity.json's
`canary_completions`), the expected answer (from the code set, or the needle's seeded value), the repeat counts, the
stale list.

    ok, score = code_answer(" 14", "14")                     # (True, Extraction("14", "correct", ...))
    problem = rejudge_canary("code[mul-7-2]", row, completion, report, judged, reference_row)
    # None, or one line naming the field: "canaries.code[mul-7-2]: field ok is True, but its answer ' 15' ..."

A forger who edits identity.json can edit the text too: the text is checked against the token ids it came from
only where the reference recorded the same ids (a token-exact canary has the reference's text, which the reference's
own record holds).
"""

from __future__ import annotations

import re
from pathlib import Path

from oracle.canary.code import CODE_SET, Extraction, load_set, score_answer
from oracle.canary.needle import NeedleScore, needle_for, score_needle
from oracle.canary.repeats import RepeatSummary
from oracle.store.json_files import InputFileError
from oracle.store.records import token_sha256

__all__ = ["code_answer", "needle_answer", "rejudge_canary", "repeats_ok", "set_fresh"]

CORRECT = "correct"


def code_answer(text: str, expected: str) -> tuple[bool, Extraction]:
    """A code item's answer: right only when the extraction rule finds the program's output first."""
    score = score_answer(text, expected)
    return score.verdict == CORRECT, score


def needle_answer(text: str, value: str) -> tuple[bool, NeedleScore]:
    """A needle's answer: right only when its first 7-digit number is the hidden value."""
    score = score_needle(text, value)
    return score.verdict == CORRECT, score


def repeats_ok(summary: RepeatSummary) -> bool:
    """A repeat canary passes when every output is the same (one unique array)."""
    return summary.all_identical


def set_fresh(stale: list[str]) -> bool:
    """The code set is fresh when no stored answer is stale."""
    return not stale


def _field(item_id: str, name: str, stated, derived, source: str) -> str | None:
    if stated != derived:
        return f"canaries.{item_id}: field {name} is {stated!r}, but {source} gives {derived!r}"
    return None


def _code_expected(item_id: str, code_set: str | None) -> str | None:
    """The program's output as the code set stores it (None: the set is not at hand, or holds no such item)."""
    name = item_id[len("code["):-1]
    try:
        items = load_set(Path(code_set) if code_set else CODE_SET)
    except (InputFileError, OSError):
        return None
    return next((it.expected for it in items if it.id == name), None)


_NEEDLE_ID = re.compile(r"needle\[(\d+)-d(\d+)\]")


def _needle_expected(item_id: str, seed) -> str | None:
    m = _NEEDLE_ID.fullmatch(item_id)
    if m is None or not isinstance(seed, int):
        return None
    return needle_for(seed, int(m.group(1)), int(m.group(2)))[1]


def _answer(item_id: str, row: dict, completion: dict | None, expected: str | None, source: str,
            reference_row: dict | None) -> str | None:
    """ok, answer and extracted from the completion's text against the expected answer: the set's or the seed's,
    else (a --code-set not at hand) the reference's, else the row's own (its ok then follows from its text only)."""
    if expected is None and isinstance((reference_row or {}).get("expected"), str):
        expected, source = reference_row["expected"], "the reference's row"
    if expected is None:
        expected, source = row.get("expected"), "its own expected answer"
    if not isinstance(expected, str):
        return f"canaries.{item_id}: field expected is {expected!r}, not an answer to judge its text against"
    problem = _field(item_id, "expected", row.get("expected"), expected, source)
    text = (completion or {}).get("text") if completion is not None else row.get("raw_text")
    if not isinstance(text, str):
        return f"canaries.{item_id}: the report keeps no text of its answer to re-derive its field ok from"
    if problem is None and completion is not None and "raw_text" in row:
        problem = _field(item_id, "raw_text", row["raw_text"], text, "its kept completion (canary_completions)")
    if problem is None and completion is not None and "completion_sha256" in row:
        problem = _field(item_id, "completion_sha256", row["completion_sha256"],
                         token_sha256(list(completion.get("completion_ids") or [])),
                         "its kept completion's token ids")
    if problem:
        return problem
    judge = code_answer if row.get("family") == "code" else needle_answer
    ok, score = judge(text, expected)
    said = f"its answer {text[:40]!r} against {expected!r}"
    return (_field(item_id, "ok", row.get("ok"), ok, said) or _field(item_id, "answer", row.get("answer"),
                                                                     score.verdict, said)
            or _field(item_id, "extracted", row.get("extracted"), score.extracted, said))


def _repeats(item_id: str, row: dict) -> str | None:
    rep = row.get("repeats")
    try:
        summary = RepeatSummary(int(rep["n"]), int(rep["unique"]), int(rep["identical"]),
                                int(rep["baseline_index"]))
    except (KeyError, TypeError, ValueError):
        return f"canaries.{item_id}: field repeats holds no counts (n, unique, identical) to re-derive ok from"
    said = f"its counts ({summary.unique} unique of {summary.n})"
    if summary.unique == 1 and summary.identical != summary.n:
        return f"canaries.{item_id}: field repeats.identical is {summary.identical}, but {said} give {summary.n}"
    return (_field(item_id, "ok", row.get("ok"), repeats_ok(summary), said)
            or _field(item_id, "extracted", row.get("extracted"), f"{summary.identical}/{summary.n} identical", said))


def rejudge_canary(item_id: str, row: dict, completion: dict | None, report: dict, judged: dict,
                   reference_row: dict | None = None) -> str | None:
    """The canary's `ok` (and its answer's fields) re-derived by its family's rule; None when they follow."""
    family = row.get("family")
    settings = (judged.get("checks") or {}).get("canaries") or {}
    if family == "code":
        return _answer(item_id, row, completion, _code_expected(item_id, settings.get("code_set")),
                       f"the code set {settings.get('code_set') or CODE_SET.name}", reference_row)
    if family == "needle":
        seed = ((report.get("identity") or {}).get("request") or {}).get("seed")
        return _answer(item_id, row, completion, _needle_expected(item_id, seed), f"the needle of seed {seed}",
                       reference_row)
    if family in ("repeats", "burst"):
        return _repeats(item_id, row)
    if family == "code-fresh":
        stale = row.get("stale")
        if not isinstance(stale, list):
            return f"canaries.{item_id}: field stale is not the list of stale items a run writes"
        return _field(item_id, "ok", row.get("ok"), set_fresh(stale), f"its stale list ({len(stale)} item(s))")
    return None
