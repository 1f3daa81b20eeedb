"""The notes section: what the run noted (a reference recorded before a change, items dropped, servers that
differ, ...), one line each.

    lines = markdown(data); page = html(data)
"""

from __future__ import annotations

from oracle.report.page import e

__all__ = ["PLACE", "html", "markdown"]

PLACE = 140  # page order (report/sections.py): last: the run's notes


def markdown(data: dict) -> list[str]:
    notes = data.get("notes") or []
    return ["", "Notes:"] + [f"- {n}" for n in notes] if notes else []


def html(data: dict) -> str:
    notes = data.get("notes") or []
    return "<h2>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>" if notes else ""
