"""Server-sent events from network chunks: event boundaries anywhere, each event at its chunk's arrival time."""

from __future__ import annotations

import asyncio
import math

import pytest

from oracle.backends.stream import DONE, MalformedEvent, loads, sse_events


def read(chunks: list[bytes]) -> list[tuple[float, bytes]]:
    """The events of these chunks; chunk i arrives at time i + 1 (the clock is read once per chunk)."""
    ticks = iter(range(1, len(chunks) + 2))

    async def source():
        for chunk in chunks:
            yield chunk

    async def go():
        return [e async for e in sse_events(source(), clock=lambda: float(next(ticks)))]
    return asyncio.run(go())


def test_several_events_in_one_chunk_share_its_arrival_time():
    assert read([b'data: {"a":1}\n\ndata: {"a":2}\n\n', b'data: {"a":3}\n\n']) == [
        (1.0, b'{"a":1}'), (1.0, b'{"a":2}'), (2.0, b'{"a":3}')]


@pytest.mark.parametrize("cut", range(1, 24))
def test_an_event_split_anywhere_arrives_with_the_chunk_that_completes_it(cut):
    stream = b'data: {"a":1}\n\ndata: {"b":2}\n\n'
    events = read([stream[:cut], stream[cut:]])
    assert [p for _, p in events] == [b'{"a":1}', b'{"b":2}']
    first_done = stream.index(b"\n\n") + 2  # the blank line ends the event
    assert events[0][0] == (1.0 if cut >= first_done else 2.0) and events[1][0] == 2.0


def test_one_byte_chunks():
    stream = b'data: {"a":1}\r\n\r\ndata: [DONE]\r\n\r\n'
    events = read([stream[i:i + 1] for i in range(len(stream))])
    assert events == [(stream.index(b"\r\n\r\n") + 4.0, b'{"a":1}'), (float(len(stream)), DONE)]


def test_crlf_and_cr_line_ends_and_a_crlf_split_between_chunks():
    assert [p for _, p in read([b"data: 1\r", b"\n\r\ndata: 2\r\rdata: 3\n\n"])] == [b"1", b"2", b"3"]


def test_comments_other_fields_and_keep_alives_are_skipped():
    stream = [b": keep-alive\n\nevent: message\nid: 7\nretry: 10\ndata: {\"a\":1}\n\n", b": ping\n\n\n\n",
              b"data:[DONE]\n\n"]
    assert read(stream) == [(1.0, b'{"a":1}'), (3.0, DONE)]


def test_data_lines_of_one_event_are_joined_and_a_last_event_without_its_blank_line_is_given():
    assert read([b'data: {"a":\ndata: 1}\n\ndata: {"b":2}']) == [(1.0, b'{"a":\n1}'), (1.0, b'{"b":2}')]
    assert read([b"data: x\n", b"\n", b"data: y\n"]) == [(2.0, b"x"), (3.0, b"y")]
    assert read([]) == [] and read([b"\n\n", b": only a comment\n\n"]) == []
    # the unterminated last line, by the same rule as every line: "data:" with or without its space, a held CR
    assert read([b"data:z\r"]) == [(1.0, b"z")] and read([b"data: a\n", b"data: b\r"]) == [(2.0, b"a\nb")]
    assert read([b": only a comment"]) == [] and read([b"id: 7"]) == []


def test_loads_agrees_with_the_standard_parser_where_orjson_refuses():
    got = loads(b'{"lp": -Infinity, "x": NaN}')
    assert got["lp"] == -math.inf and math.isnan(got["x"])
    assert loads('{"t": "\u00e9"}'.encode()) == {"t": "\u00e9"}


def test_loads_names_bytes_that_are_not_utf8_or_not_json():
    # JSON is UTF-8 (RFC 8259): a server that sends other bytes is broken, and its text is never guessed at.
    with pytest.raises(MalformedEvent, match=r"bytes that are not UTF-8 \(invalid start byte at byte 7\): "
                                            r"b'\{\"t\": \"\\xff\"\}'"):
        loads(b'{"t": "\xff"}')
    with pytest.raises(MalformedEvent, match=r"not JSON \(Expecting value: line 1 column 9 \(char 8\)\): b'\{\"cut\": '"):
        loads(b'{"cut": ')


def test_batches_give_each_network_chunk_once_with_the_events_it_completed():
    from oracle.backends.stream import sse_batches

    chunks = [b'data: {"a":1}\n\ndata: {"a":2}\n\ndata: {"a', b'":3}\n\n: ping\n\n', b"data: [DONE]\n\n"]
    ticks = iter([1.0, 2.0, 3.0])

    async def source():
        for chunk in chunks:
            yield chunk

    async def go():
        return [b async for b in sse_batches(source(), clock=lambda: next(ticks))]
    assert asyncio.run(go()) == [(1.0, [b'{"a":1}', b'{"a":2}']), (2.0, [b'{"a":3}']), (3.0, [DONE])]
