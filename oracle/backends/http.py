"""What the HTTP families (llamacpp; openai, and vllm through it) share: the server's address, one sync client for
administration (/props, /metrics, /v1/models) and an async client per run with as many connections as the run's
concurrency, both sending the API key from the environment (`auth_headers`), never writing it."""

from __future__ import annotations

import httpx

from oracle.backends.base import DEFAULT_TIMEOUT, auth_headers, request_timeout

__all__ = ["HttpClients"]


class HttpClients:
    def _connect(self, base_url: str, *, transport: httpx.BaseTransport | None,
                 async_transport: httpx.AsyncBaseTransport | None, timeout_s: float | None) -> None:
        """`timeout_s`: how long a streamed generation may stay silent (--request-timeout); administration keeps
        the default."""
        self.base_url = base_url.rstrip("/")
        self._timeout = request_timeout(timeout_s) if timeout_s else DEFAULT_TIMEOUT
        self._async_transport = async_transport
        self._client = httpx.Client(base_url=self.base_url, timeout=DEFAULT_TIMEOUT, transport=transport,
                                    headers=auth_headers())

    def async_client(self, *, connections: int = 1) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, timeout=self._timeout, transport=self._async_transport,
                                 headers=auth_headers(),
                                 limits=httpx.Limits(max_connections=connections,
                                                     max_keepalive_connections=connections))
