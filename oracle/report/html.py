"""identity.html: one self-contained page (inline CSS and SVG, no script, no network) from identity.json.

    html = render_html(data, SECTIONS)  # data: the dict identity.json holds; SECTIONS: oracle.checks.SECTIONS
    (folder / "identity.html").write_text(html)

The page is every section in its order (`report/sections.py`): header (verdict, counts, identity), servers,
the verdict grid (a row per prompt, a column per condition, a labelled cell each) with the split viewer for
every non-exact cell and plots, logits, the speed card, canaries, checks with their cache and speculation
evidence, notes. Labels are in the cells, so the page reads without colour and prints.
"""

from __future__ import annotations

from types import ModuleType
from typing import Sequence

from oracle.report.grid import grid
from oracle.report.page import PAGE_CSS, e

__all__ = ["PAGE_CSS", "grid", "render_html"]


def render_html(data: dict, sections: Sequence[ModuleType]) -> str:
    body = "".join(section.html(data) for section in sections)
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>oracle {e(data.get('mode'))}: {e(data.get('verdict'))}</title><style>{PAGE_CSS}</style></head>"
            f"<body>{body}<p><small>written {e(data.get('written_utc'))} · schema {e(data.get('schema_version'))}"
            "</small></p></body></html>\n")
