"""Proof of overlap: how many requests really generated at the same time.

A request generates from its first streamed token to its last; one queued behind a busy
slot has not started. The achieved concurrency of a wave is the largest number of these
intervals that cover one instant (client side, from the records' token timestamps).

    achieved_concurrency(records)  # 8 when 8 requests were generating at once
"""

from __future__ import annotations

from typing import Iterable, Sequence

from oracle.store.records import Record

__all__ = ["achieved_concurrency", "generating_interval", "max_overlap"]


def generating_interval(record: Record) -> tuple[float, float] | None:
    """(first token, last token) on the wall clock, or None for a request that produced no token."""
    if not record.token_times_s:
        return None
    return record.started_at + record.token_times_s[0], record.started_at + record.token_times_s[-1]


def max_overlap(intervals: Iterable[tuple[float, float]]) -> int:
    """Largest number of closed intervals sharing one instant (a start at t meets an end at t)."""
    events = []
    for start, end in intervals:
        events.append((start, 0))  # starts sort before ends at the same instant
        events.append((end, 1))
    events.sort()
    best = now = 0
    for _, kind in events:
        now += 1 if kind == 0 else -1
        best = max(best, now)
    return best


def achieved_concurrency(records: Sequence[Record]) -> int:
    return max_overlap(iv for iv in map(generating_interval, records) if iv is not None)
