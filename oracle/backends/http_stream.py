"""The generation requests' client: aiohttp, whose HTTP/1.1 parser is llhttp in C, where httpx's h11 parses each
chunk in Python (23-28 us of CPU per streamed token against 3-4 us; docs/performance.md). It answers with the
shape of httpx's streamed response that the backends read (`status_code`, `aread()`, `aiter_bytes()`), and its
failures are raised as the httpx errors of the same kind, so a fault reads the same whichever client met it.

    async with StreamClient("http://127.0.0.1:8080", timeout, connections=8) as client:
        async with client.stream("POST", "/completion", json=body) as r:
            async for chunk in r.aiter_bytes():   # the bytes as they arrive, one network read at a time
                ...
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import AsyncIterator

import aiohttp
import httpx
import orjson
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

from oracle.backends.base import auth_headers
from oracle.backends.gc_pause import pause_collector, resume_collector

__all__ = ["StreamAnswer", "StreamClient", "as_httpx_error"]

_JSON = {"Content-Type": "application/json"}


def as_httpx_error(exc: aiohttp.ClientError) -> httpx.TransportError:
    """The httpx error of the same kind (faults.broken words them): a refused connection, a silent server (the
    per-read timeout), a connection reset or cut mid-answer, an answer that is no HTTP."""
    words = str(exc) or type(exc).__name__
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return httpx.ConnectTimeout(words)
    if isinstance(exc, aiohttp.ServerTimeoutError):  # sock_read: nothing arrived for the per-read timeout
        return httpx.ReadTimeout(words)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return httpx.ConnectError(words)
    if isinstance(exc, aiohttp.ClientPayloadError):  # the body cut short: a reset, or a chunk left unfinished
        reset = isinstance(exc.__cause__ or exc.__context__, OSError) or "ConnectionReset" in words
        return httpx.ReadError(words) if reset else httpx.RemoteProtocolError(words)
    if isinstance(exc, aiohttp.ClientResponseError):  # a status line or headers that are no HTTP/1.1
        return httpx.RemoteProtocolError(words)
    if isinstance(exc, (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)):
        return httpx.ReadError(words)
    return httpx.TransportError(words)


class StreamAnswer:
    """A streamed answer, read as httpx's streamed `Response` is."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status_code = response.status

    async def aread(self) -> bytes:
        try:
            return await self._response.read()
        except aiohttp.ClientError as exc:
            raise as_httpx_error(exc) from exc

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """What each network read brought, de-chunked, as soon as it is parsed (never a line at a time)."""
        content = self._response.content
        try:
            while True:
                chunk = await content.readany()
                if not chunk:
                    return
                yield chunk
        except aiohttp.ClientError as exc:
            raise as_httpx_error(exc) from exc


class StreamClient:
    """A run's async client: as many connections as the run's concurrency, the per-read timeout and the connect
    timeout of --request-timeout, the API key header (`auth_headers`); a --oracle-url's user:password is sent as httpx
    sends it (aiohttp takes it from the URL). The environment's proxy (HTTP_PROXY, NO_PROXY, ...) is honoured as
    httpx honours it, looked up once per client: aiohttp's trust_env would ask a thread for it, and for ~/.netrc,
    on every request."""

    def __init__(self, base_url: str, timeout: httpx.Timeout, *, connections: int = 1) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None
        self._proxy: tuple[URL | None, aiohttp.BasicAuth | None] = (None, None)

    async def __aenter__(self) -> StreamClient:
        # Every request on a connection of its own: servers close kept-alive ones on their own terms (uvicorn after
        # 5 s idle, llama-server's cpp-httplib after a number of requests), and a request written on a connection
        # being closed breaks ("Cannot write to closing transport"); a POST is never retried. A local connect costs
        # well under a millisecond, outside every token time.
        connector = aiohttp.TCPConnector(limit=self._connections, limit_per_host=self._connections,
                                         ttl_dns_cache=None, force_close=True)
        self._session = aiohttp.ClientSession(
            connector=connector, headers=auth_headers(),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.timeout.connect, sock_read=self.timeout.read))
        try:
            self._proxy = get_env_proxy_for_url(URL(self.base_url))
        except LookupError:  # no proxy for this server, or NO_PROXY names it
            self._proxy = (None, None)
        pause_collector()  # while streams are read: no collection walks the rows in flight (gc_pause.py)
        return self

    async def __aexit__(self, *exc) -> None:
        if self._session is not None:
            try:
                await self._session.close()
            finally:
                self._session = None
                resume_collector()

    @asynccontextmanager
    async def stream(self, method: str, route: str, *, json: dict) -> AsyncIterator[StreamAnswer]:
        """One request whose answer is read as it arrives; the connection is closed unless it was read to its end
        (as httpx does), so a stream left midway never answers the next request."""
        assert self._session is not None, "StreamClient is used inside `async with`"
        try:
            response = await self._session.request(method, f"{self.base_url}{route}", data=orjson.dumps(json),
                                                   headers=_JSON, proxy=self._proxy[0], proxy_auth=self._proxy[1])
        except aiohttp.ClientError as exc:
            raise as_httpx_error(exc) from exc
        try:
            yield StreamAnswer(response)
        finally:
            response.release()
