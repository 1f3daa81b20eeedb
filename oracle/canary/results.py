"""Canary verdicts (the DESIGN table's canary rows) and the one-line summary of the report (its section:
`canary/report.py`).

    canary_verdict(ok=False, reference={"code[mul-7-2]": {"ok": True}}, item_id="code[mul-7-2]", strict=False)
    # -> ("fail", "regression: the reference answered it right")
    canary_summary(state.canaries)
    # "code 9/12, needle 18/20 (3 dropped), repeats 5/5 identical, burst 5/5 identical, crosstalk c4 pass"
    # (against a reference: ", tokens vs reference 19 exact 1 divergent")
    family_counts(state.canaries)
    # {"code": (9, 12), "needle": (18, 20), "repeats": (5, 5), "burst": (5, 5), "crosstalk": (4, 4)}

A `dropped` item (beyond what the server holds, never sent) is no trial: it is counted apart, never in N/M.
"""

from __future__ import annotations

from oracle.compare.verdicts import DROPPED, FAIL, INFO, PASS

__all__ = ["FAMILIES", "REPORT_KEY", "TOKENS_KEY", "canary_summary", "canary_verdict", "family_counts",
           "token_counts"]

FAMILIES = ("code", "needle", "repeats", "burst", "crosstalk")
REPORT_KEY = "canaries"  # identity.json's key of the canary rows (item id -> row)
TOKENS_KEY = "tokens_vs_reference"  # a row's comparison with the reference's completion (canary/tokens.py)


def canary_verdict(*, ok: bool, item_id: str, reference: dict | None, strict: bool) -> tuple[str, str]:
    """(verdict, why) for one canary result.

    Right answer: pass. Wrong where the reference was right: fail (regression). Wrong with no
    reference, or where the reference was wrong too: info (passes), unless --canary-strict.
    """
    if ok:
        return PASS, "right"
    ref = (reference or {}).get(item_id) if reference is not None else None
    if reference is not None and ref is not None and ref.get("ok"):
        return FAIL, "regression: the reference answered it right"
    if strict:
        return FAIL, "wrong, and --canary-strict fails wrong canaries"
    if reference is None:
        return INFO, "wrong, reported as information (no reference; --canary-strict fails it)"
    if ref is None:
        return INFO, "wrong; the reference holds no result for this item, so it cannot be a regression"
    return INFO, "wrong, and the reference was wrong too (not a regression)"


def _sent(canaries: dict[str, dict], family: str) -> list[dict]:
    return [r for r in canaries.values() if r.get("family") == family and r.get("verdict") != DROPPED]


def canary_summary(canaries: dict[str, dict]) -> str | None:
    """'code 9/12, needle 18/20 (3 dropped), repeats 5/5 identical, burst 5/5 identical' (families present only)."""
    parts = []
    for family in ("code", "needle"):
        rows = _sent(canaries, family)
        n_dropped = sum(r.get("family") == family and r.get("verdict") == DROPPED for r in canaries.values())
        if rows or n_dropped:
            parts.append(f"{family} {sum(bool(r.get('ok')) for r in rows)}/{len(rows)}"
                         + (f" ({n_dropped} dropped)" if n_dropped else ""))
    for family in ("repeats", "burst"):
        rows = [r for r in canaries.values() if r.get("family") == family]
        for r in rows:
            rep = r.get("repeats") or {}
            if rep:
                parts.append(f"{family} {rep.get('identical')}/{rep.get('n')} identical")
            else:
                parts.append(f"{family} not run")
    crosstalk = sorted((r for r in canaries.values() if r.get("family") == "crosstalk"),
                       key=lambda r: r.get("level") or 0)
    if crosstalk:
        parts.append("crosstalk " + ", ".join(f"c{r.get('level')} {r.get('verdict')}" for r in crosstalk))
    stale = [r for r in canaries.values() if r.get("family") == "code-fresh" and not r.get("ok")]
    if stale:
        parts.append("code set STALE")
    tokens = token_counts(canaries)
    if tokens:
        parts.append("tokens vs reference " + " ".join(f"{n} {verdict}" for verdict, n in tokens.items()))
    return ", ".join(parts) if parts else None


def token_counts(canaries: dict[str, dict]) -> dict[str, int]:
    """How many canaries compared token for token with the reference ended each verdict (canary/tokens.py), in
    the order exact, near-tie, divergent, not-compared; empty when none was compared (no reference)."""
    verdicts = [(r.get(TOKENS_KEY) or {}).get("verdict") for r in canaries.values()]
    order = ("exact", "near-tie", "divergent", "not-compared")
    return {v: verdicts.count(v) for v in order if v in verdicts}


def family_counts(canaries: dict[str, dict]) -> dict[str, tuple[int, int]]:
    """(k, n) per family present: right answers of code and needle items; identical outputs of the repeats and
    burst requests (over every such item that ran)."""
    out = {}
    for family in ("code", "needle"):
        rows = _sent(canaries, family)
        if rows:
            out[family] = (sum(bool(r.get("ok")) for r in rows), len(rows))
    for family in ("repeats", "burst"):
        ran = [r["repeats"] for r in canaries.values() if r.get("family") == family and r.get("repeats")]
        if ran:
            out[family] = (sum(rep["identical"] for rep in ran), sum(rep["n"] for rep in ran))
    # crosstalk: completions sent at once that hold no other request's content, over all such completions
    waves = [r for r in canaries.values() if r.get("family") == "crosstalk" and r.get("requests")]
    if waves:
        out["crosstalk"] = (sum(len(r["requests"]) - len(r.get("contamination") or []) for r in waves),
                            sum(len(r["requests"]) for r in waves))
    return out
