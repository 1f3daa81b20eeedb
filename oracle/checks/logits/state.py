"""The logits check's part of the report (identity.json `logits`): KLD / Same top p against the reference per
prompt and over the suite, or the reference's own precision floor (record mode, under `floor`).

    state = LogitsState(); state.apply("logits", report); state.apply("logits", {"floor": floor})
"""

from __future__ import annotations

from oracle.checks.descriptor import SectionState

__all__ = ["LogitsState"]


class LogitsState(SectionState):
    """A later finding adds to the report (the floor beside the comparison). Not merged under -n (as before the
    merge rules were written down): logits are refused there, and a worker's logits would cover its own records
    only; the merged report keeps every worker's logits checks."""

    KEYS = ("logits",)
    # Where its keys go in identity.json (report/state.py's PLACES)
    PLACES = {"logits": 80, "summary.logits": 20}

    def summary(self, report) -> dict:
        """The report summary's logits line: the suite's mean KLD and same top-1 over its positions (None: none)."""
        overall = (self.report or {}).get("overall") or {}
        return {"logits": ({"mean_kld": overall["mean_kld"], "same_top1": overall["same_top1"],
                            "positions": overall["positions"]} if overall.get("positions") else None)}
