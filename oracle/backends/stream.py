"""Server-sent events read from the bytes as they arrive, each with the time its bytes arrived.

    async with aclosing(sse_events(response.aiter_bytes())) as stream:
        async for arrived, payload in stream:   # perf_counter seconds, the event's data as bytes
            if payload == DONE:
                break
            chunk = loads(payload)

`sse_batches` gives the same events a network chunk at a time, `(arrived, [payload, ...])` (the backends' loop).

The time is taken the moment a network chunk is handed over, before anything in it is parsed: every
event completed by that chunk carries its time (an event split across chunks carries the time of the
chunk that completed it). Parsing therefore never delays a token's time, however slow it is. Events
end at a blank line; an event's `data:` lines are joined with a newline; comments (`: keep-alive`)
and other fields (`event:`, `id:`) are skipped; lines may end in LF, CRLF or CR.
"""

from __future__ import annotations

import json
import time
from contextlib import aclosing
from typing import AsyncIterator, Callable

import orjson

from oracle.backends.faults import MalformedEvent

__all__ = ["DONE", "MalformedEvent", "loads", "sse_batches", "sse_events"]

DONE = b"[DONE]"  # the OpenAI stream's last event


async def sse_batches(chunks: AsyncIterator[bytes], *, clock: Callable[[], float] = time.perf_counter
                      ) -> AsyncIterator[tuple[float, list[bytes]]]:
    """(arrival time, the data of each event it completed) per network chunk that completed any, in order; an
    unterminated last event is given too. The backends read this: one step of the generator per network read,
    not per event, is what a fast stream's thousands of events a second can afford."""
    pending = b""  # the bytes of an unfinished line
    data: list[bytes] = []  # the unfinished event's data lines
    arrived = 0.0
    async for chunk in chunks:
        arrived = clock()
        if pending:
            chunk = pending + chunk
        held_cr = False
        if b"\r" in chunk:
            held_cr = chunk.endswith(b"\r")  # a CRLF may be split between this chunk and the next
            if held_cr:
                chunk = chunk[:-1]
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        events, rest = _events(chunk, data)
        pending = chunk[rest:] + b"\r" if held_cr else chunk[rest:]
        if events:
            yield arrived, events
    if pending:  # the unterminated last line, read by the same rule as every other
        _events(pending.rstrip(b"\r") + b"\n", data)
    if data:
        yield arrived, [b"\n".join(data)]


async def sse_events(chunks: AsyncIterator[bytes], *,
                     clock: Callable[[], float] = time.perf_counter) -> AsyncIterator[tuple[float, bytes]]:
    """(arrival time, data) of each event with data, in order; an unterminated last event is given too."""
    async with aclosing(sse_batches(chunks, clock=clock)) as batches:
        async for arrived, events in batches:
            for event in events:
                yield arrived, event


def _events(chunk: bytes, data: list[bytes]) -> tuple[list[bytes], int]:
    """The events that the complete lines of `chunk` finish, and where its unfinished last line starts; the data of
    an event still open is left in `data`. The inner loop of every event: lines are found by memchr (`find`), not by
    `split` (a byte-at-a-time loop that copies every line), and an event of one data line and its blank line, which
    is what servers send, is taken in one step, its data copied once."""
    out: list[bytes] = []
    find, startswith, last = chunk.find, chunk.startswith, len(chunk) - 1
    start = 0
    while (end := find(b"\n", start)) >= 0:
        if end == start:  # a blank line: the end of an event
            if data:
                out.append(data[0] if len(data) == 1 else b"\n".join(data))
                data.clear()
        else:
            if startswith(b"data: ", start):
                value = start + 6
            elif startswith(b"data:", start):
                value = start + 5
            else:  # a comment or another field
                start = end + 1
                continue
            if not data and end < last and chunk[end + 1] == 10:  # the blank line right after (10 is "\n")
                out.append(chunk[value:end])
                start = end + 2
                continue
            data.append(chunk[value:end])
        start = end + 1
    return out, start


def loads(payload: bytes):
    """One event's JSON, by orjson; what orjson refuses (NaN, Infinity) goes to the standard parser, so the
    result is `json.loads` of the text (but for integers beyond 64 bits, which orjson reads as floats: no server
    sends such ids or counts). MalformedEvent for bytes that are not UTF-8 or not JSON, quoting their start."""
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        pass
    try:
        text = payload.decode()
    except UnicodeDecodeError as exc:
        raise MalformedEvent(f"bytes that are not UTF-8 ({exc.reason} at byte {exc.start}): "
                             f"{payload[:80]!r}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedEvent(f"not JSON ({exc}): {payload[:80]!r}") from None
