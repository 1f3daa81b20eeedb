"""The canaries' names and the needle's default depths: what `--canaries` and `--needle-depths` declare, here
without the canary machinery, so that the option declarations stay light (oracle/checks/__init__.py)."""

from __future__ import annotations

__all__ = ["CANARY_CHECK", "CANARY_KINDS", "DEFAULT_DEPTHS"]

CANARY_CHECK = "canaries"  # the check kind that holds the canaries' settings (oracle/checks/canaries/)
CANARY_KINDS = ("code", "needle", "repeats", "crosstalk")  # --canaries' choices (checks/canaries/options.py)
DEFAULT_DEPTHS = (0, 25, 50, 75, 100)  # --needle-depths: percent of the haystack
