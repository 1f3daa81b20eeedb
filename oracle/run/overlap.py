"""Proof of overlap: how many requests really generated at the same time.

A request generates from its first streamed token to its last; one queued behind a busy
slot has not started. The achieved concurrency of a wave is the largest number of these
intervals that cover one instant (client side, from the records' token timestamps).

    achieved_concurrency(records)  # 8 when 8 requests were generating at once
    unproven_overlap(2, 1, server_peak=2)  # why a level of 2 was not proven, and what to do about it
"""

from __future__ import annotations

from typing import Iterable, Sequence

from oracle.store.records import Record

__all__ = ["achieved_concurrency", "generating_interval", "max_overlap", "unproven_overlap"]


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


def unproven_overlap(asked: int, reached: int, *, server_peak: int | None = None) -> str:
    """The line of a level whose requests did not all generate at once. When the server's own gauge (its running
    requests, sampled during the waves) counted the whole level, the server ran them together and their streams
    were held back on the way to the client: more slots would not help, and the line says so."""
    if server_peak is not None and server_peak >= asked:
        return (f"only {reached} of {asked} requests streamed at the same time, although the server counted "
                f"{server_peak} running: their streams reached this client one after another, held back between "
                "the server's engine and this client (a buffering proxy, or a front end short of CPU), so the level "
                "was not proven from the answers (send the requests straight to the server, with a core to spare "
                "for its front end)")
    return (f"only {reached} of {asked} requests generated at the same time: the level was not proven "
            "(give the server more slots: llama-server -np N, vllm serve --max-num-seqs N)")
