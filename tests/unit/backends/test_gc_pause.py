"""The collector is paused while a streaming client is open and runs again, as it was, once the last one closes."""

from __future__ import annotations

import asyncio
import gc

import httpx
import pytest

from oracle.backends.base import request_timeout
from oracle.backends.gc_pause import pause_collector, resume_collector
from oracle.backends.http_stream import StreamClient


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_nested_clients_pause_once_and_resume_when_the_last_closes(collector_on):
    pause_collector()
    pause_collector()
    assert not gc.isenabled()
    resume_collector()
    assert not gc.isenabled()  # one still open
    resume_collector()
    assert gc.isenabled()
    resume_collector()  # one resume too many changes nothing
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off(collector_on):
    gc.disable()
    pause_collector()
    resume_collector()
    assert not gc.isenabled()


def test_a_stream_client_pauses_the_collector_while_open_even_when_its_request_fails(collector_on):
    seen = []

    async def go():
        async with StreamClient("http://127.0.0.1:9/", request_timeout(2)) as client:  # port 9: nothing listens
            seen.append(gc.isenabled())
            with pytest.raises(httpx.ConnectError):
                async with client.stream("POST", "/completion", json={}):
                    pass
        seen.append(gc.isenabled())

    asyncio.run(go())
    assert seen == [False, True]
