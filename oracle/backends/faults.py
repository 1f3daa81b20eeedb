"""What a failed generation request says: the server's own error message, an error inside the stream, a stream
that is not JSON, a broken connection or a hang. Each is a `RequestFailed` that names what happened; the run
stops on it and nothing is retried.

    raise refused(503, b'{"error": {"code": 503, "message": "Loading model"}}', after=0)
    # RequestFailed: the server answered HTTP 503: Loading model
"""

from __future__ import annotations

import json

import httpcore
import httpx

from oracle.backends.base import RequestFailed

__all__ = ["MalformedEvent", "broken", "error_event", "malformed", "overdue", "refused", "server_message"]

MESSAGE_CHARS = 300  # of a server's error message quoted in the run's message


class MalformedEvent(ValueError):
    """A stream event whose data is not UTF-8 JSON."""


def server_message(error) -> str:
    """The server's own words from an error body or event: `{"error": {"message": ...}}` (llama.cpp, OpenAI,
    vLLM), `{"error": "..."}`, `{"message": ...}`, `{"detail": ...}` (FastAPI), else the text itself."""
    if isinstance(error, (bytes, str)):
        text = error.decode(errors="replace") if isinstance(error, bytes) else error
        try:
            error = json.loads(text)
        except ValueError:
            return text.strip()[:MESSAGE_CHARS] or "(empty body)"
    if isinstance(error, dict):
        inner = error.get("error", error)
        if isinstance(inner, dict):
            words = inner.get("message") or inner.get("detail")
            kind = inner.get("type")
            if words:
                return (f"{words} ({kind})" if kind else str(words))[:MESSAGE_CHARS]
        elif inner:
            return str(inner)[:MESSAGE_CHARS]
        if error.get("detail"):
            return str(error["detail"])[:MESSAGE_CHARS]
    return json.dumps(error)[:MESSAGE_CHARS]


def refused(status: int, body: bytes, *, route: str) -> RequestFailed:
    """The server answered the generation request with an HTTP error."""
    side = "the request was refused" if 400 <= status < 500 else "the server failed"
    return RequestFailed(f"the server answered HTTP {status} on POST {route} ({side}): {server_message(body)}")


def error_event(error, *, route: str, after: int) -> RequestFailed:
    """The server sent an error event inside the stream."""
    return RequestFailed(f"the server sent an error inside the stream of POST {route} after {after} tokens: "
                         f"{server_message(error)}")


def malformed(exc: ValueError, *, route: str, after: int) -> RequestFailed:
    """A stream event that is not JSON (or not UTF-8)."""
    return RequestFailed(f"the server sent a malformed stream event on POST {route} after {after} tokens: {exc}")


def broken(exc: Exception, *, url: str, after: int, read_timeout_s: float | None) -> RequestFailed:
    """The connection failed: a hang past the read timeout, a reset, a refused connection, a cut stream."""
    name = f"{type(exc).__name__}: {exc}".rstrip(": ")
    if isinstance(exc, (httpx.ReadTimeout, httpcore.ReadTimeout)) and read_timeout_s:
        return RequestFailed(f"POST {url}: the server sent nothing for {read_timeout_s:g} s after {after} tokens "
                             f"(--request-timeout {read_timeout_s:g}): it hangs, or needs a longer "
                             f"--request-timeout ({name})")
    if isinstance(exc, (httpx.ConnectError, httpcore.ConnectError)):
        return RequestFailed(f"POST {url}: could not connect: the server is gone ({name})")
    return RequestFailed(f"POST {url}: the connection broke after {after} tokens: reset or closed by the server "
                         f"({name})")


def overdue(*, url: str, after: int, total_s: float, silent_s: float | None = None) -> RequestFailed:
    """The whole request took longer than --request-timeout (tokens and keep-alive comments do not extend it).
    silent_s: how long the server had sent nothing when the deadline came; most of the window is a hang."""
    if silent_s is not None and silent_s >= total_s / 2:
        return RequestFailed(f"POST {url}: the server sent no token for {silent_s:.0f} s after {after} tokens "
                             "(keep-alive comments are not tokens), and the request reached --request-timeout "
                             f"{total_s:g} s in all: it hangs, or needs a longer "
                             f"--request-timeout (raise it with --request-timeout {int(total_s * 4)} if the server is "
                             "only slow)")
    return RequestFailed(f"POST {url}: the request took longer than --request-timeout {total_s:g} s in all "
                         f"({after} tokens received): the server streams without end, or is slow; raise it with "
                         f"--request-timeout {int(total_s * 4)} if the server is only slow")
