"""identity.md: the report's sections in their order (`report/sections.py`), from the identity.json dict.

    text = markdown(data, SECTIONS)   # SECTIONS: oracle.checks.SECTIONS, the page laid out once
"""

from __future__ import annotations

from types import ModuleType
from typing import Sequence

__all__ = ["markdown"]


def markdown(data: dict, sections: Sequence[ModuleType]) -> str:
    return "\n".join(line for section in sections for line in section.markdown(data)) + "\n"
