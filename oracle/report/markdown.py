"""identity.md: every section of `report/sections.py` in its order, from the identity.json dict.

    text = markdown(data)
"""

from __future__ import annotations

from oracle.report import sections

__all__ = ["markdown"]


def markdown(data: dict) -> str:
    return "\n".join(line for section in sections.SECTIONS for line in section.markdown(data)) + "\n"
