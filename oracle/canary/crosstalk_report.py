"""The crosstalk canary's report section, Markdown and HTML from one place, over the identity.json dict.

    lines = markdown(data)   # [] when no crosstalk level ran
    block = html(data)       # "" likewise

One row per ladder level: its verdict, the overlap reached, how many requests copied their marker alone (c1)
and at once, and every contamination found (victim, source, token position, the tokens' text).
"""

from __future__ import annotations

from html import escape

__all__ = ["PLACE", "html", "markdown"]

PLACE = 120  # page order (report/sections.py): the contamination canary, level by level


def _rows(data: dict) -> list[tuple[str, dict]]:
    rows = [(k, r) for k, r in (data.get("canaries") or {}).items() if r.get("family") == "crosstalk"]
    return sorted(rows, key=lambda kr: kr[1].get("level") or 0)


def _copied(row: dict, key: str) -> str:
    reqs = row.get("requests") or []
    return f"{sum(bool(r.get(key)) for r in reqs)}/{len(reqs)}"


def _overlap(row: dict) -> str:
    ov = row.get("overlap") or {}
    return f"{ov.get('reached')} of {ov.get('asked')}" if ov else "-"


def _found(row: dict) -> list[str]:
    return [f"{c['victim']} holds {c['source']}'s content at token {c['position']} "
            f"({c['sign']}: {c['text']!r})" for c in row.get("contamination") or []]


def _found_html(row: dict) -> str:
    found = "<br>".join(escape(f) for f in _found(row))
    return found or ("-" if row.get("requests") else escape(str(row.get("why"))))


def markdown(data: dict) -> list[str]:
    rows = _rows(data)
    if not rows:
        return []
    out = ["", "Crosstalk canary (concurrent requests each copy their own marker; another's content in a "
           "completion is `contaminated`):", "",
           "| level | verdict | overlap | copied alone | copied at once | contamination |",
           "| --- | --- | --- | --- | --- | --- |"]
    for item_id, r in rows:
        found = "; ".join(_found(r)).replace("|", "\\|") or ("-" if r.get("requests") else str(r.get("why")))
        out.append(f"| c{r.get('level')} | {r.get('verdict')} | {_overlap(r)} | {_copied(r, 'copied_c1')} | "
                   f"{_copied(r, 'copied')} | {found} |")
    return out


def html(data: dict) -> str:
    rows = _rows(data)
    if not rows:
        return ""
    body = "".join(
        f"<tr class='{escape(str(r.get('verdict')))}'><td class=mono>{escape(item_id)}</td>"
        f"<td>{escape(str(r.get('verdict')))}</td><td>{escape(_overlap(r))}</td>"
        f"<td>{escape(_copied(r, 'copied_c1'))}</td><td>{escape(_copied(r, 'copied'))}</td>"
        f"<td>{_found_html(r)}</td></tr>" for item_id, r in rows)
    return ("<h3>Crosstalk</h3><p>Concurrent requests each copy their own marker; another request's content "
            "in a completion is <b>contaminated</b> (always fails).</p><table><tr><th>level</th>"
            "<th>verdict</th>"
            "<th>overlap</th><th>copied alone</th><th>copied at once</th><th>contamination</th></tr>"
            f"{body}</table>")
