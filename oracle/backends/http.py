"""What the HTTP families (llamacpp; openai, and vllm through it) share: the server's address, one sync client for
administration (/props, /metrics, /v1/models) and an async client per run with as many connections as the run's
concurrency, both sending the API key from the environment (`auth_headers`), never writing it. The async client is
aiohttp's (`StreamClient`: a parser in C, the stream's hot path); a scripted `async_transport` (httpx's
MockTransport in the unit tests) is read through httpx instead, with the same shape and the same errors."""

from __future__ import annotations

import httpx

from oracle.backends.base import DEFAULT_TIMEOUT, auth_headers, request_timeout
from oracle.backends.faults import broken, refused
from oracle.backends.http_stream import StreamClient

__all__ = ["HttpClients", "send_one_shot"]


def send_one_shot(base_url: str, route: str, body: dict, *, timeout_s: float,
                  transport: httpx.BaseTransport | None = None) -> dict:
    """`Backend.one_shot`'s (route, body) sent once, not streamed, and its JSON answer (what `oracle repro`
    replays, as its curl command does). A failure is a `RequestFailed` in the backends' words (faults.py):
    the server's own message for an HTTP error, what broke for a connection; never retried."""
    url = f"{base_url.rstrip('/')}{route}"
    try:
        with httpx.Client(timeout=timeout_s, transport=transport, headers=auth_headers()) as client:
            r = client.post(url, json=body)
    except httpx.HTTPError as exc:
        raise broken(exc, url=url, after=0, read_timeout_s=timeout_s) from exc
    if r.status_code != 200:
        raise refused(r.status_code, r.content, route=route)
    return r.json()


class HttpClients:
    def _connect(self, base_url: str, *, transport: httpx.BaseTransport | None,
                 async_transport: httpx.AsyncBaseTransport | None, timeout_s: float | None) -> None:
        """`timeout_s`: how long a request may stay silent (--request-timeout), a generation's stream and the
        administration requests (/metrics, /slots, /tokenize) alike: a server frozen between two conditions stops
        the run as one frozen mid-stream does."""
        self.base_url = base_url.rstrip("/")
        self._timeout = request_timeout(timeout_s) if timeout_s else DEFAULT_TIMEOUT
        self._async_transport = async_transport
        self._client = httpx.Client(base_url=self.base_url, timeout=self._timeout, transport=transport,
                                    headers=auth_headers())

    def async_client(self, *, connections: int = 1) -> StreamClient | httpx.AsyncClient:
        if self._async_transport is None:
            return StreamClient(self.base_url, self._timeout, connections=connections)
        return httpx.AsyncClient(base_url=self.base_url, timeout=self._timeout, transport=self._async_transport,
                                 headers=auth_headers(),
                                 limits=httpx.Limits(max_connections=connections,
                                                     max_keepalive_connections=connections))
