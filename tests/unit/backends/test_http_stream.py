"""aiohttp's failures raised as the httpx errors of the same kind, so faults.broken words a fault as before."""

from __future__ import annotations

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
