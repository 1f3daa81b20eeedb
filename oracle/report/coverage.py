"""The identity report's condition coverage section: one row per run (boot x level), one column per
condition, and for each condition that held nowhere, why and how to cause it. Both renderings read the
identity.json dict.

    lines = markdown(data)   # Markdown lines ([] when the report has no coverage)
    section = html(data)     # an HTML fragment ("" likewise)
"""

from __future__ import annotations

from html import escape

from oracle.compare.coverage import CONDITIONS, held_anywhere

__all__ = ["PLACE", "html", "markdown"]

PLACE = 100  # page order (report/sections.py): which conditions each run produced


def _chunk_words(data: dict) -> str:
    chunk = (data.get("identity") or {}).get("prefill_chunk") or {}
    if not chunk:
        return "prefill chunk: not read"
    size = f"{chunk['tokens']} tokens" if chunk.get("tokens") else "unknown"
    return f"prefill chunk: {size} ({chunk.get('source')})"


def _cell(row: dict | None) -> str:
    if row is None:
        return "-"
    return "yes" if row.get("held") else "no"


def _detail(row: dict | None) -> str:
    return "" if row is None else row.get("detail", "")


def _unreached(coverage: dict) -> list[tuple[str, str]]:
    """(condition, why and how) for each condition that held in no run, from the latest run's row (a ladder
    level or boot says best how to cause it)."""
    out = []
    for name in CONDITIONS:
        rows = [r[name] for r in coverage.values() if name in r]
        if rows and not held_anywhere(coverage, name):
            first = rows[-1]
            out.append((name, first["detail"] + (f": {first['how']}" if first.get("how") else "")))
    return out


def _required(data: dict) -> list[str]:
    check = next((c for c in data.get("checks") or [] if c.get("id") == "coverage"), None)
    return list((check or {}).get("evidence", {}).get("required") or [])


def markdown(data: dict) -> list[str]:
    coverage = data.get("coverage") or {}
    if not coverage:
        return []
    required = _required(data)
    lines = ["", "## Condition coverage", "",
             f"- {_chunk_words(data)}",
             f"- required (--require-conditions): {', '.join(required) or 'none'}", "",
             "| run | " + " | ".join(CONDITIONS) + " |", "| --- |" + " --- |" * len(CONDITIONS)]
    for run, row in coverage.items():
        lines.append(f"| {run} | " + " | ".join(_cell(row.get(name)) for name in CONDITIONS) + " |")
    lines += [""] + [f"- {name} not reached: {words}" for name, words in _unreached(coverage)]
    return lines


def html(data: dict) -> str:
    coverage = data.get("coverage") or {}
    if not coverage:
        return ""
    e = lambda v: escape(str(v))  # noqa: E731
    head = "".join(f"<th>{e(name)}</th>" for name in CONDITIONS)
    body = ""
    for run, row in coverage.items():
        cells = "".join(f"<td class='coverage {_cell(row.get(name))}' title='{e(_detail(row.get(name)))}'>"
                        f"{_cell(row.get(name))}</td>" for name in CONDITIONS)
        body += f"<tr><td>{e(run)}</td>{cells}</tr>"
    unreached = "".join(f"<li>{e(name)} not reached: {e(words)}</li>" for name, words in _unreached(coverage))
    required = ", ".join(_required(data)) or "none"
    return (f"<h2>Condition coverage</h2><p>{e(_chunk_words(data))} · required: {e(required)}</p>"
            f"<table><tr><th>run</th>{head}</tr>{body}</table>"
            + (f"<ul>{unreached}</ul>" if unreached else ""))
