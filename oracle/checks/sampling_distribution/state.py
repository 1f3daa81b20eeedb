"""The sampled run's part of the report (identity.json `sampling`): the settings and which check judges them
(written as the run starts), and the distribution check's statistics (`distribution`) when it ran.

    state = SamplingState(); state.apply("sampling", {"settings": ...}); state.apply("sampling", {"distribution": d})
"""

from __future__ import annotations

from oracle.checks.descriptor import SectionState

__all__ = ["SamplingState"]


class SamplingState(SectionState):
    """None for a greedy run. A later finding adds to the report (the distribution beside the settings). Merged
    as the controller's own: the settings are the plan's, and the distribution check is refused under -n."""

    KEYS = ("sampling",)
    # Where its keys go in identity.json (report/state.py's PLACES)
    PLACES = {"sampling": 140}
