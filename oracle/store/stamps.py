"""The one time stamp oracle writes into its reports and references: UTC to the second, ISO 8601.

    utc_now()   # '2026-01-01T12:00:00Z'
"""

from __future__ import annotations

import time

__all__ = ["utc_now"]


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
