"""The downgrade when a server returned no token ids: its text is compared instead, and says so.

    check = text_check("tokens[p1]", reference_record, candidate_record)
"""

from __future__ import annotations

from oracle.backends.base import TEXT_DOWNGRADE
from oracle.compare.verdicts import DIVERGENT, EXACT
from oracle.compare.verdicts import Check

__all__ = ["text_check"]

_CONTEXT = 40


def text_check(check_id: str, reference, candidate) -> Check:
    """exact when text and finish reason are equal; else divergent at the first differing character.
    Text equality is weaker than token identity (two token paths can spell one text), so the detail
    always carries the downgrade note."""
    a, b = reference.text, candidate.text
    evidence = {"compared": "text", "reason": TEXT_DOWNGRADE, "condition": candidate.condition.key,
                "reference_characters": len(a), "candidate_characters": len(b)}
    if a == b and reference.finish_reason == candidate.finish_reason:
        return Check(check_id, "tokens", EXACT, f"{TEXT_DOWNGRADE}; {len(b)} characters identical, finish "
                     f"{candidate.finish_reason}", [], evidence)
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    evidence["first_divergence_character"] = i
    where = f"text differs from character {i}" if a != b else "finish reason differs"
    lines = [f"shared text before it: {a[max(0, i - _CONTEXT):i]!r}",
             f"reference continues: {a[i:i + _CONTEXT]!r} (finish {reference.finish_reason})",
             f"candidate continues: {b[i:i + _CONTEXT]!r} (finish {candidate.finish_reason})"]
    return Check(check_id, "tokens", DIVERGENT, f"{TEXT_DOWNGRADE}; {where}", lines, evidence)
