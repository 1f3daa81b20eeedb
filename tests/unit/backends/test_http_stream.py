"""aiohttp's failures raised as the httpx errors of the same kind, so faults.broken words a fault as before."""

from __future__ import annotations

import re
import socket
import struct

import aiohttp
import httpx
import pytest
from aiohttp.client_reqrep import ConnectionKey

from oracle.backends.faults import broken
from oracle.backends.http_stream import as_httpx_error

_KEY = ConnectionKey("127.0.0.1", 1, False, True, None, None, None)


@pytest.mark.parametrize("exc, kind, said", [
    (aiohttp.SocketTimeoutError("Timeout on reading data from socket"), httpx.ReadTimeout,
     "POST http://s/completion: the server sent nothing for 30 s after 5 tokens (--request-timeout 30)"),
    (aiohttp.ClientConnectorError(_KEY, ConnectionRefusedError(111, "Connection refused")), httpx.ConnectError,
     "POST http://s/completion: could not connect: the server is gone (ConnectError: "),
    (aiohttp.ServerDisconnectedError(), httpx.ReadError,
     "POST http://s/completion: the connection broke after 5 tokens: reset or closed by the server (ReadError"),
    (aiohttp.ClientPayloadError("Response payload is not completed: <TransferEncodingError: 400, message='Not "
                                "enough data to satisfy transfer length header.'>"), httpx.RemoteProtocolError,
     "POST http://s/completion: the connection broke after 5 tokens: reset or closed by the server "
     "(RemoteProtocolError: Response payload is not completed"),
    (aiohttp.ClientOSError(104, "Connection reset by peer"), httpx.ReadError,
     "POST http://s/completion: the connection broke after 5 tokens: reset or closed by the server (ReadError"),
], ids=["silent", "refused", "disconnected", "cut-chunk", "reset"])
def test_each_aiohttp_failure_reads_as_the_httpx_error_of_its_kind(exc, kind, said):
    mapped = as_httpx_error(exc)
    assert type(mapped) is kind
    assert str(broken(mapped, url="http://s/completion", after=5, read_timeout_s=30.0)).startswith(said)


# -- on a socket: a scripted HTTP/1.1 server on 127.0.0.1 (protocol faults a real server does not make on demand) --
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _served(answer: bytes, *, then_wait_s: float = 0.0, timeout_s: float = 5.0, reset: bool = False):
    """What StreamClient reads from a server that answers `answer` (then keeps the socket open then_wait_s, and
    closes it, or resets it: SO_LINGER 0, a TCP reset): (status, the chunks' bytes joined, the error raised, if any)
    and the request the server got."""
    import asyncio

    from oracle.backends.base import request_timeout
    from oracle.backends.http_stream import StreamClient

    got: list[bytes] = []

    async def serve(reader, writer):
        got.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(answer)
        await writer.drain()
        await asyncio.sleep(then_wait_s)
        if reset:
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        else:
            writer.close()

    async def go():
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        body, error, status = b"", None, None
        async with server, StreamClient(f"http://127.0.0.1:{port}/", request_timeout(timeout_s)) as client:
            try:
                async with client.stream("POST", "/completion", json={"n_predict": 2}) as r:
                    status = r.status_code
                    async for data in r.aiter_bytes():
                        body += data
            except httpx.TransportError as exc:
                error = exc
        return status, body, error
    return asyncio.run(go()), got


def test_a_stream_is_read_to_its_end_and_the_request_is_a_json_post():
    (status, body, error), got = _served(HEAD + _chunk(b"data: 1\n\n") + _chunk(b"data: 2\n\n") + b"0\r\n\r\n")
    assert (status, body, error) == (200, b"data: 1\n\ndata: 2\n\n", None)
    assert got[0].startswith(b"POST /completion HTTP/1.1\r\n") and b"Content-Type: application/json" in got[0]


def test_a_stream_cut_midway_is_a_broken_connection_in_httpx_words():
    (status, body, error), _ = _served(HEAD + _chunk(b"data: 1\n\n") + b"40\r\ndata: 2")
    assert status == 200 and body.startswith(b"data: 1\n\n")
    assert isinstance(error, (httpx.RemoteProtocolError, httpx.ReadError)), repr(error)


def test_a_tcp_reset_inside_a_chunked_stream_is_a_read_error():
    """A real reset (SO_LINGER 0) after two chunks of a chunked body: ReadError, which faults.broken words as a
    broken connection. (In a body framed by the close alone, HTTP/1.0's, a reset reads as the body's end; the
    backend then stops on the final message that never came.)"""
    (status, body, error), _ = _served(HEAD + _chunk(b"data: 1\n\n") + _chunk(b"data: 2\n\n"), then_wait_s=0.1,
                                       reset=True)
    assert status == 200 and body == b"data: 1\n\ndata: 2\n\n"
    assert isinstance(error, httpx.ReadError), repr(error)
    assert re.search("Connection reset by peer|not completed", str(error)), str(error)


def test_a_silent_server_is_the_per_read_timeout_in_httpx_words():
    (status, body, error), _ = _served(HEAD + _chunk(b"data: 1\n\n"), then_wait_s=3.0, timeout_s=1.0)
    assert status == 200 and body == b"data: 1\n\n"
    assert isinstance(error, httpx.ReadTimeout), repr(error)


def test_keep_alive_comments_after_a_token_end_at_the_total_deadline_as_a_silence():
    """The real path (StreamClient, not a scripted transport): a token, then comments every 0.1 s, never another
    event; the request stops at --request-timeout and says how long no token came."""
    import asyncio
    import json
    import time

    from oracle.backends import CompletionRequest, RequestFailed
    from oracle.backends.llamacpp import LlamaCppBackend

    async def serve(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        token = json.dumps({"content": "a", "tokens": [5], "stop": False}).encode()
        writer.write(HEAD + _chunk(b"data: " + token + b"\n"))
        try:
            while True:
                writer.write(_chunk(b": keep-alive\n\n"))
                await writer.drain()
                await asyncio.sleep(0.1)
        except (ConnectionError, RuntimeError):
            writer.close()

    async def go():
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        backend = LlamaCppBackend(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", timeout_s=2)
        async with server, backend.async_client() as client:
            return await backend.complete(client, CompletionRequest(prompt_ids=(1, 2), max_tokens=4, logprobs=0))
    started = time.monotonic()
    with pytest.raises(RequestFailed, match=r"/completion: the server sent no token for 2 s after 1 tokens \(keep-alive "
                                            r"comments are not tokens\), and the request reached --request-timeout 2 s"):
        asyncio.run(go())
    assert time.monotonic() - started < 10
