"""The canary set a reference was recorded with, and a gate that follows it: a record run whose budget dropped
needles writes the lengths it ran into its manifest (`run.canary_set`); a gate against it collects those lengths,
not its own defaults, so that a record and its gates stay comparable (each needle has a reference answer).

    run["canary_set"] = canary_set(canary_state.rows)   # at record time (the canaries' for_reference)
    canary = follow_canary_set(canary, reference)    # a gate's canary settings, at its start (the check's resolve)

A gate that gives --needle-lengths runs those (its items without a reference answer are reported as such).
"""

from __future__ import annotations

import dataclasses

__all__ = ["canary_set", "follow_canary_set", "recorded_needle_lengths"]


def canary_set(rows: dict[str, dict]) -> dict:
    """The manifest's `canary_set`, from the canary rows: the needle lengths a gate against this reference collects,
    and those its budget dropped with why, one entry per length. A length the server's context could not hold
    stays in the set: a gate on a larger context runs it, without a reference answer to compare (information)."""
    needles = [row for row in rows.values() if row.get("family") == "needle" and "length" in row]
    lengths = sorted({row["length"] for row in needles if not row.get("budget")})
    dropped: dict[int, str] = {}
    for row in needles:
        if row.get("budget"):
            dropped.setdefault(row["length"], str(row.get("why") or ""))
    return {"needle_lengths": lengths, "dropped": [{"length": n, "reason": dropped[n]} for n in sorted(dropped)]}


def recorded_needle_lengths(manifest: dict) -> tuple[tuple[int, ...] | None, str]:
    """The needle lengths a reference ran, and where that is read; None: it does not say (no needle recorded)."""
    run = manifest.get("run") if isinstance(manifest.get("run"), dict) else {}
    recorded = (run or {}).get("canary_set")
    if isinstance(recorded, dict) and isinstance(recorded.get("needle_lengths"), list):
        return tuple(int(n) for n in recorded["needle_lengths"]), "the reference's manifest, run.canary_set"
    rows = manifest.get("canaries") or {}
    lengths = sorted({row["length"] for row in rows.values() if isinstance(row, dict)
                      and row.get("family") == "needle" and isinstance(row.get("length"), int)})
    return (tuple(lengths), "the reference's needle answers") if lengths else (None, "")


def follow_canary_set(canary, reference):
    """A gate's canary settings with the reference's needle lengths, unless --needle-lengths chose them, and a
    note saying so. No needle in the reference: the gate collects none."""
    if reference is None or canary.needle_lengths is not None or "needle" not in canary.kinds:
        return canary  # no reference, lengths given, or no needle asked: nothing to follow
    lengths, where = recorded_needle_lengths(reference.manifest)
    if lengths is None:
        return canary
    source = f"the reference's canary set, read from {where}"
    note = (f"the needle canaries follow the reference's canary set: {', '.join(map(str, lengths)) or 'none'} "
            f"tokens ({source}); --needle-lengths chooses others, without a reference answer to compare")
    canary = dataclasses.replace(canary, needle_lengths=lengths or None, lengths_from=source,
                                 notes=canary.notes + (note,))
    if not lengths:
        canary = dataclasses.replace(canary, kinds=tuple(k for k in canary.kinds if k != "needle"))
    return canary
