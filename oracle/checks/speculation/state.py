"""The speculation check's part of the report (identity.json `speculation`): the primary run's drafted and
accepted tokens, their source and per request, and what the check read (declared, the server's config).

    state = SpeculationState(); state.apply("speculation", summary); state.to_json()
"""

from __future__ import annotations

from oracle.checks.descriptor import SectionState
from oracle.compare.evidence import speculation_totals

__all__ = ["SpeculationState"]


class SpeculationState(SectionState):
    """None until the primary run ends."""

    KEYS = ("speculation",)
    # Where its keys go in identity.json (report/state.py's PLACES)
    PLACES = {"speculation": 10}

    @classmethod
    def merge(cls, own: "SpeculationState", parts: list[tuple[str, "SpeculationState"]]) -> "SpeculationState":
        """Every server's primary run: the counts added up, the requests of all of them."""
        reports = [state.report for _, state in parts if state.report]
        if not reports:
            return cls(None)
        per_request = {k: v for p in reports for k, v in (p.get("per_request") or {}).items()}
        known = [p for p in reports if p.get("drafted") is not None]
        if not known:
            return cls({"drafted": None, "accepted": None, "source": None, "per_request": per_request})
        totals = speculation_totals(drafted=sum(p["drafted"] for p in known),
                                    accepted=sum(p.get("accepted") or 0 for p in known),
                                    drafts=sum(p.get("drafts") or 0 for p in known))
        return cls({"drafted": totals.pop("drafted"), "accepted": totals.pop("accepted"),
                    "source": ", ".join(sorted({str(p["source"]) for p in known})), "per_request": per_request,
                    **totals})
