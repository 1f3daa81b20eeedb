"""The canaries section of the report: the summary per family and each canary that did not pass (identity.md),
a row per canary (identity.html).

    lines = markdown(data); page = html(data)   # from the identity.json dict
"""

from __future__ import annotations

from html import escape

from oracle.canary.results import TOKENS_KEY, canary_summary
from oracle.compare.verdicts import DROPPED

__all__ = ["PLACE", "html", "markdown", "markdown_lines"]

PLACE = 110  # page order (report/sections.py): code, needle, repeats


def _e(value) -> str:
    return escape("" if value is None else str(value))


def markdown_lines(canaries: dict[str, dict]) -> list[str]:
    """identity.md lines: the summary, then one line per canary that did not pass and why."""
    line = canary_summary(canaries)
    if line is None:
        return []
    out = [f"- canaries: {line}"]
    for item_id, r in canaries.items():
        if r.get("family") == "crosstalk":
            continue  # its own section (canary/crosstalk_report.py) names the requests and positions
        if r.get("verdict") == DROPPED:
            out.append(f"  - {item_id}: dropped: {r.get('why')} (not sent)")
        elif not r.get("ok"):
            got = r.get("extracted")
            out.append(f"  - {item_id}: {r.get('verdict')}: expected {r.get('expected')!r}, got {got!r} "
                       f"({r.get('reason') or r.get('why')})")
        tokens = r.get(TOKENS_KEY) or {}
        if tokens.get("verdict") in ("near-tie", "divergent"):
            out.append(f"  - {item_id}:tokens: {tokens['verdict']}: {tokens.get('detail')}")
    return out


def markdown(data: dict) -> list[str]:
    lines = markdown_lines(data.get("canaries") or {})
    return [""] + lines if lines else []  # its own block (it follows the speed card's table)


def html(data: dict) -> str:
    rows = data.get("canaries") or {}
    if not rows:
        return "<h2>Canaries</h2><p>No canaries ran.</p>"
    body = "".join(f"<tr class='{_e(r.get('verdict'))}'><td class=mono>{_e(k)}</td><td>{_e(r.get('verdict'))}</td>"
                   f"<td class=mono>{_e(r.get('expected'))}</td><td class=mono>{_e(r.get('extracted'))}</td>"
                   f"<td>{_e(r.get('reason') or r.get('why') or r.get('detail'))}</td>{_tokens_cell(r)}</tr>"
                   for k, r in rows.items())
    return ("<h2>Canaries</h2>"
            "<table><tr><th>canary</th><th>verdict</th><th>expected</th><th>got</th><th>why</th>"
            f"<th>tokens vs reference</th></tr>{body}</table>")


def _tokens_cell(row: dict) -> str:
    """The canary's complete token array against the reference's: its verdict and the split, or why not compared."""
    tokens = row.get(TOKENS_KEY)
    if not tokens:
        return "<td></td>"
    words = tokens.get("detail") or tokens.get("why") or ""
    return f"<td class='{_e(tokens.get('verdict'))}'>{_e(tokens.get('verdict'))}: {_e(words)}</td>"
