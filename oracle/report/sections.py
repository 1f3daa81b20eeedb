"""The report's sections, in the order identity.md and identity.html show them. A section is a module with
`PLACE` (its position: lower first), `markdown(data: dict) -> list[str]` and `html(data: dict) -> str`, both over
the identity.json dict (an empty list / "" when it has nothing to say); it lives next to its capability.

The report owns four sections of its own (`FRAME`: header, servers, localize, notes); every other one is named by the check
kind that writes it (its descriptor's `sections`), and the registry lays them out once (`oracle.checks.SECTIONS`,
above the report in the layers, which is why the page's list is handed to the renderers rather than read here):

    sections = layout(check_sections)            # FRAME and the checks' sections, by PLACE
    text = markdown(data, sections)

A new section: its module, with its `PLACE`, named in its check's descriptor. No line here.
"""

from __future__ import annotations

from types import ModuleType
from typing import Iterable

from oracle.report import header, localized, notes, servers

__all__ = ["FRAME", "layout"]

FRAME: tuple[ModuleType, ...] = (header, servers, localized, notes)


def layout(check_sections: Iterable[ModuleType]) -> tuple[ModuleType, ...]:
    """FRAME and the given sections, each once, by PLACE; ValueError for a module without PLACE or two sections at
    one place (the page's order would then be the registry's accident)."""
    chosen: dict[str, ModuleType] = {}
    for module in (*FRAME, *check_sections):
        chosen.setdefault(module.__name__, module)
    places: dict[int, str] = {}
    for name, module in chosen.items():
        place = getattr(module, "PLACE", None)
        if not isinstance(place, int):
            raise ValueError(f"report section {name} has no PLACE (an int: where the page shows it)")
        if place in places:
            raise ValueError(f"report sections {places[place]} and {name} both stand at PLACE {place}")
        places[place] = name
    return tuple(sorted(chosen.values(), key=lambda m: m.PLACE))
