"""The cache-zero check's part of the report (identity.json `cache`): the primary run's cached-token evidence,
per request and from the server's counters, with the check's verdict.

    state = CacheZeroState(); state.apply("cache", check.evidence | {"verdict": "pass"}); state.to_json()
"""

from __future__ import annotations

from oracle.checks.descriptor import SectionState

__all__ = ["CacheZeroState"]


class CacheZeroState(SectionState):
    """None until the cache-zero item ran."""

    KEYS = ("cache",)
    # Where its keys go in identity.json (report/state.py's PLACES)
    PLACES = {"cache": 20}

    @classmethod
    def merge(cls, own: "CacheZeroState", parts: list[tuple[str, "CacheZeroState"]]) -> "CacheZeroState":
        """Every server's own proof, kept under its label; the worst verdict, the counts added up."""
        reports = {label: state.report for label, state in parts if state.report}
        if not reports:
            return cls(None)
        verdicts = [p.get("verdict") for p in reports.values()]
        verdict = next((v for v in ("fail", "inconclusive", "pass") if v in verdicts), verdicts[0])
        return cls({"verdict": verdict,
                    "requests": sum(p.get("requests") or 0 for p in reports.values()),
                    "requests_with_cache_field": sum(p.get("requests_with_cache_field") or 0
                                                     for p in reports.values()),
                    "cached_requests": {f"{k}@{label}": v for label, p in reports.items()
                                        for k, v in (p.get("cached_requests") or {}).items()},
                    "counter_deltas": {label: p.get("counter_deltas") for label, p in reports.items()},
                    "servers": reports})
