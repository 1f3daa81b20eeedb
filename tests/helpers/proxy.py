"""A fault-injecting HTTP proxy in front of a real server, for faults a real server cannot produce on demand.

    with FaultProxy(upstream, rewrite_chunk=change_token(position=5)) as proxy:
        ... --oracle-url proxy.url ...

Requests are forwarded as they are (or through rewrite_request); streamed SSE chunks pass
through rewrite_chunk(chunk, ctx), where ctx is per request ({"tokens_seen": n, "body": ...}); with pace_s
each request's streamed pieces leave at least pace_s apart (a planted slowdown); answer(path, body) may return
(status, JSON body) for the proxy to answer itself, never forwarding that request (a planted server error).
With basic_auth=(user, password) only requests that carry those credentials are forwarded; any other is
answered 401 (and counted). With one_stream_at_a_time the proxy passes one completion's stream at a time: another
one, read from the server as it is generated, is held until the first has ended and let through 0.5 s later (a
front end that withholds a stream).

Planted server faults on the request_index-th /completion request (counted from 1):

    FaultProxy(upstream, answer_status={2: (500, b'{"error": {...}}')})   # answered at once, never forwarded
    FaultProxy(upstream, stream_fault=StreamFault(request_index=2, after_events=3, kind="reset"))

StreamFault kinds, after that many data events have passed: "error-event" (an error event, then the stream
ends), "malformed" (an event that is not JSON), "non-utf8" (an event with bytes that are not UTF-8), "reset"
(the socket closed abruptly: a TCP reset), "keep-alive" (SSE comments every 0.2 s, never another event, until the
client goes).
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass(frozen=True)
class StreamFault:
    request_index: int  # which /completion request (1 = the first the proxy sees)
    after_events: int  # data events passed on before the fault
    kind: str  # "error-event", "malformed", "non-utf8" or "reset"
    message: str = "planted: the slot crashed"  # the error event's message

    def event(self) -> bytes:
        """The planted event's bytes (for every kind but "reset")."""
        if self.kind == "error-event":
            error = {"error": {"code": 500, "message": self.message, "type": "server_error"}}
            return b"data: " + json.dumps(error).encode() + b"\n\n"
        if self.kind == "malformed":
            return b'data: {"tokens": [42, \n\n'
        if self.kind == "non-utf8":
            return b'data: {"content": "\xff\xfe", "tokens": [42], "stop": false}\n\n'
        raise ValueError(f"unknown stream fault {self.kind!r}")

import httpx


class FaultProxy:
    def __init__(self, upstream: str, *, rewrite_request: Callable[[str, dict], dict] | None = None,
                 rewrite_chunk: Callable[[dict, dict], dict] | None = None, port: int = 0,
                 refuse_paths: tuple[str, ...] = (), pace_s: float = 0.0,
                 answer_status: dict[int, tuple[int, bytes]] | None = None,
                 stream_fault: StreamFault | None = None,
                 answer: Callable[[str, dict | None], tuple[int, dict] | None] | None = None,
                 basic_auth: tuple[str, str] | None = None, burst: bool = False,
                 one_stream_at_a_time: bool = False) -> None:
        self.upstream = upstream.rstrip("/")
        self.rewrite_request = rewrite_request
        self.rewrite_chunk = rewrite_chunk
        self.refuse_paths = refuse_paths  # answered 404, as by a server without that route
        self.pace_s = pace_s  # a planted delay: streamed pieces of a request released at least this far apart
        # A buffering reverse proxy (nginx's proxy_buffering, an ingress): each completion's stream is held until
        # it ends and delivered in one write, so the client's clock times the proxy, not the server.
        self.burst = burst
        self.delivering = threading.Lock() if one_stream_at_a_time else None  # held by the stream passing now
        self.answer_status = answer_status or {}  # request index -> (HTTP status, body), answered by the proxy
        self.stream_fault = stream_fault
        self.answer = answer  # (status, JSON) the proxy answers itself, or None to forward the request
        self.answered = 0  # requests the proxy answered itself
        self.basic_auth = basic_auth
        self.unauthorized = 0  # requests refused for want of the basic_auth credentials
        self.authorized = 0
        self.completions = 0
        self.in_flight = 0  # /completion requests open right now
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *a):
                pass

            def _forward(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if proxy.basic_auth and not self._authorized():
                    return
                if self.path.split("?")[0] in proxy.refuse_paths:
                    self.send_response(404)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(b'{"error": {"code": 404, "message": "File Not Found"}}')
                    return
                body = json.loads(raw) if raw else None
                own = proxy.answer(self.path, body) if proxy.answer else None
                if own is not None:
                    with proxy.lock:
                        proxy.answered += 1
                    self.send_response(own[0])
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(json.dumps(own[1]).encode())
                    return
                ctx = {"tokens_seen": 0, "body": body, "path": self.path, "proxy": proxy}
                if body is not None and proxy.rewrite_request:
                    body = proxy.rewrite_request(self.path, body)
                completion = self.path.startswith("/completion")
                if completion:
                    with proxy.lock:
                        proxy.completions += 1
                        proxy.in_flight += 1
                        ctx["index"] = proxy.completions
                try:
                    if ctx.get("index") in proxy.answer_status:
                        self._answer(*proxy.answer_status[ctx["index"]])
                        return
                    self._stream(method, body, ctx)
                finally:
                    if completion:
                        with proxy.lock:
                            proxy.in_flight -= 1

            def _authorized(self) -> bool:
                expected = "Basic " + base64.b64encode(":".join(proxy.basic_auth).encode()).decode()
                with proxy.lock:
                    if self.headers.get("Authorization") == expected:
                        proxy.authorized += 1
                        return True
                    proxy.unauthorized += 1
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="oracle-test"')
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"error": {"code": 401, "message": "Unauthorized"}}')
                return False

            def _stream(self, method: str, body, ctx: dict) -> None:
                with httpx.Client(timeout=600) as c, c.stream(method, proxy.upstream + self.path,
                                                               json=body if body is not None else None) as r:
                    self.send_response(r.status_code)
                    self.send_header("Content-Type", r.headers.get("content-type", "application/json"))
                    self.end_headers()
                    self._pass(r, ctx)

            def _pass(self, r, ctx: dict) -> None:
                """The upstream's lines to the client, rewritten, paced, held or faulted as planted; one stream at a
                time (proxy.delivering), a stream's lines wait until it holds the turn."""
                fault = proxy.stream_fault if proxy.stream_fault and ctx.get("index") == \
                    proxy.stream_fault.request_index else None
                released, events = None, 0
                held: list[bytes] = []
                turn = proxy.delivering if ctx.get("index") else None
                mine = turn is None or turn.acquire(blocking=False)
                try:
                    for line in r.iter_lines():
                        if fault and line.startswith("data: ") and events == fault.after_events:
                            self._plant(fault)
                            return
                        events += line.startswith("data: ")
                        if line.startswith("data: ") and line != "data: [DONE]" and proxy.rewrite_chunk:
                            chunk = proxy.rewrite_chunk(json.loads(line[6:]), ctx)
                            line = "data: " + json.dumps(chunk)
                        if proxy.pace_s and line.startswith("data: "):
                            if released is not None:
                                time.sleep(max(0.0, released + proxy.pace_s - time.perf_counter()))
                            released = time.perf_counter()
                        mine = mine or self._take_turn(turn)
                        held.append((line + "\n").encode())
                        if (proxy.burst and ctx.get("index")) or not mine:
                            continue
                        self.wfile.write(b"".join(held))
                        self.wfile.flush()
                        held.clear()
                    # a held stream that ended first waits here for the one passing now
                    mine = mine or self._take_turn(turn, wait=True)
                    if held:
                        self.wfile.write(b"".join(held))
                        self.wfile.flush()
                finally:
                    if turn is not None and mine:
                        turn.release()

            @staticmethod
            def _take_turn(turn: threading.Lock, *, wait: bool = False) -> bool:
                """A held stream's turn (one stream at a time): it is let through 0.5 s after the one before it
                ended, so that no client reads its first token in the same instant as the other's last."""
                if not turn.acquire(blocking=wait):
                    return False
                time.sleep(0.5)
                return True

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _plant(self, fault: StreamFault) -> None:
                if fault.kind == "keep-alive":  # a stream kept open by comments alone
                    try:
                        while True:
                            self.wfile.write(b": keep-alive\n\n")
                            self.wfile.flush()
                            time.sleep(0.2)
                    except OSError:  # the client went
                        return
                if fault.kind == "reset":  # SO_LINGER 0: close() sends a TCP reset instead of a clean end
                    self.wfile.flush()
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    return
                self.wfile.write(fault.event())
                self.wfile.flush()

            def do_GET(self):
                self._forward("GET")

            def do_POST(self):
                self._forward("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "FaultProxy":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def pieces(upstream: str, ids: list[int]) -> str:
    """The text the upstream server's own detokenizer makes of ids."""
    r = httpx.post(upstream + "/detokenize", json={"tokens": ids}, timeout=30)
    r.raise_for_status()
    return r.json()["content"]


def _change_at(position: int, delta: int, when):
    """Chunk rewriter: add delta to the token at `position` of each request for which when(ctx) holds there. The
    chunk's text becomes what its new ids detokenize to, as a server that chose another token streams it (ids and
    text that disagree are a broken answer, a fault of another kind)."""

    def rewrite(chunk: dict, ctx: dict) -> dict:
        ids = chunk.get("tokens") or []
        start = ctx["tokens_seen"]
        if start <= position < start + len(ids) and when(ctx):
            ids[position - start] += delta
            chunk["tokens"] = ids
            if "content" in chunk:
                chunk["content"] = pieces(ctx["proxy"].upstream, ids)
        ctx["tokens_seen"] += len(ids)
        return chunk

    return rewrite


def change_token(*, request_index: int, position: int, delta: int = 1):
    """Change the completion token at `position` of the request_index-th /completion request."""
    return _change_at(position, delta, lambda ctx: ctx.get("index") == request_index)


def change_token_when_busy(*, at_least: int, position: int, delta: int = 1):
    """Change the token at `position` of every request that sees `at_least` requests in flight when it gets there."""
    return _change_at(position, delta, lambda ctx: ctx["proxy"].in_flight >= at_least)


def change_token_at_width(*, width: int, position: int, delta: int = 1):
    """Change the token at `position` of every request that sees exactly `width` requests in flight when it gets
    there (a kernel bucket edge at one batch width: fewer or more in flight leave it alone)."""
    return _change_at(position, delta, lambda ctx: ctx["proxy"].in_flight == width)


# What one streamed token of llama-server carries.
_SWAPPED = ("content", "tokens", "completion_probabilities")


def swap_between_streams(*, positions: range, wait_s: float = 1.0):
    """Chunk rewriter that mixes two concurrent streams: at each token position in `positions`, a request that
    sees another request in flight waits (up to wait_s) for a partner at the same position, and the two swap
    that token (its id, text and logprobs), as a server whose slots read each other's rows would. A request
    with no partner passes unchanged. `rewrite.swaps` lists (position, index, partner index) per request."""
    cond = threading.Condition()
    waiting: dict[int, dict] = {}  # position -> the request that waits there: {"index", "chunk", "answer"}
    swaps: list[tuple[int, int, int]] = []

    def exchange(position: int, index: int, chunk: dict, ctx: dict) -> dict:
        mine = {k: chunk[k] for k in _SWAPPED if k in chunk}
        with cond:
            other = waiting.get(position)
            if other is not None and other["index"] != index and other.get("answer") is None:
                other["answer"], other["partner"] = mine, index
                del waiting[position]
                cond.notify_all()
                swaps.append((position, index, other["index"]))
                return chunk | other["chunk"]
            if ctx["proxy"].in_flight < 2:
                return chunk
            slot = {"index": index, "chunk": mine, "answer": None}
            waiting[position] = slot
            cond.wait_for(lambda: slot["answer"] is not None, timeout=wait_s)
            if waiting.get(position) is slot:
                del waiting[position]
            if slot["answer"] is None:
                return chunk
            swaps.append((position, index, slot["partner"]))
            return chunk | slot["answer"]

    def rewrite(chunk: dict, ctx: dict) -> dict:
        ids = chunk.get("tokens") or []
        position = ctx["tokens_seen"]
        ctx["tokens_seen"] += len(ids)
        if len(ids) == 1 and position in positions and ctx.get("index") is not None:
            return exchange(position, ctx["index"], chunk, ctx)
        return chunk

    rewrite.swaps = swaps
    return rewrite


def noisy_logprobs(*, sigma: float, seed: int = 0):
    """Chunk rewriter: add Gaussian noise to every returned logprob; the tokens themselves are left alone."""
    import random

    rng = random.Random(seed)

    def rewrite(chunk: dict, ctx: dict) -> dict:
        for prob in chunk.get("completion_probabilities") or []:
            for top in prob.get("top_logprobs") or []:
                top["logprob"] = min(0.0, top["logprob"] + rng.gauss(0.0, sigma))
            if "logprob" in prob:
                prob["logprob"] = min(0.0, prob["logprob"] + rng.gauss(0.0, sigma))
        return chunk

    return rewrite


def server_error_for_long_prompts(*, min_prompt_tokens: int, status: int = 500):
    """answer hook: HTTP `status` with llama-server's error body for every /completion whose prompt has at least
    min_prompt_tokens ids (e.g. the needles only); everything else is forwarded."""

    def answer(path: str, body: dict | None):
        prompt = (body or {}).get("prompt")
        if path.startswith("/completion") and isinstance(prompt, list) and len(prompt) >= min_prompt_tokens:
            return status, {"error": {"code": status, "message": "planted: internal server error",
                                      "type": "server_error"}}
        return None

    return answer


def offset_logprobs(*, position: int, offset: float):
    """Chunk rewriter: add `offset` nats to every top-k logprob the stream gives at completion `position` (what
    the server streamed while decoding); tokens untouched, and a request that is not streamed (a prefill scoring
    one) never passes through here."""

    def rewrite(chunk: dict, ctx: dict) -> dict:
        probs = chunk.get("completion_probabilities") or []
        start = ctx["tokens_seen"]
        if start <= position < start + len(probs):
            prob = probs[position - start]
            for top in prob.get("top_logprobs") or []:
                top["logprob"] += offset
            if "logprob" in prob:
                prob["logprob"] += offset
        ctx["tokens_seen"] += len(chunk.get("tokens") or [])
        return chunk

    return rewrite


def change_token_beside(*, prompt_length: int, delta: int = 1):
    """Chunk rewriter: change the first token a request streams while another request whose prompt has exactly
    `prompt_length` ids is in flight beside it (from its arrival at the proxy to its last chunk), as a server whose
    output shifts only beside a neighbour of that shape (vllm #51902). The text becomes what the new id
    detokenizes to. `rewrite.changed` counts the requests changed."""
    lock = threading.Lock()
    open_requests: set[int] = set()  # the in-flight requests of that prompt length (by their body's id)
    changed: list[int] = []

    def of_length(ctx: dict) -> bool:
        prompt = (ctx.get("body") or {}).get("prompt")
        return isinstance(prompt, list) and len(prompt) == prompt_length

    def rewrite(chunk: dict, ctx: dict) -> dict:
        ids = chunk.get("tokens") or []
        if of_length(ctx):
            if chunk.get("stop"):
                with lock:
                    open_requests.discard(id(ctx["body"]))
            return chunk
        with lock:
            beside = bool(open_requests)
        if ids and beside and not ctx.get("changed"):
            ids[0] += delta
            chunk["tokens"] = ids
            if "content" in chunk:
                chunk["content"] = pieces(ctx["proxy"].upstream, ids)
            ctx["changed"] = True
            changed.append(ctx.get("index"))
        ctx["tokens_seen"] += len(ids)
        return chunk

    def arrive(path: str, body: dict) -> dict:
        """rewrite_request: a request of that prompt length is in flight from here on."""
        prompt = body.get("prompt")
        if path.startswith("/completion") and isinstance(prompt, list) and len(prompt) == prompt_length:
            with lock:
                open_requests.add(id(body))
        return body

    rewrite.arrive = arrive
    rewrite.changed = changed
    return rewrite


def nudge_one_logprob(*, position: int, width: int | None = None):
    """Chunk rewriter: move the second top-k logprob streamed at completion `position` of every request up by one
    float32 ulp (numpy.nextafter on its float32 value); tokens and every other logprob untouched. With `width`,
    only in a request that sees exactly that many requests in flight when it gets there (a ladder level's)."""
    import numpy as np

    def rewrite(chunk: dict, ctx: dict) -> dict:
        probs = chunk.get("completion_probabilities") or []
        start = ctx["tokens_seen"]
        if start <= position < start + len(probs) and (width is None or ctx["proxy"].in_flight == width):
            tops = probs[position - start].get("top_logprobs") or []
            if len(tops) > 1:
                tops[1]["logprob"] = float(np.nextafter(np.float32(tops[1]["logprob"]), np.float32(np.inf)))
        ctx["tokens_seen"] += len(chunk.get("tokens") or [])
        return chunk

    return rewrite


def change_token_for_prompt_length(*, prompt_tokens: int, position: int, delta: int = 1):
    """Change the completion token at `position` of every request whose prompt has exactly `prompt_tokens` ids (a
    needle of that length; the suite's prompts pass unchanged)."""
    return _change_at(position, delta, lambda ctx: len((ctx["body"] or {}).get("prompt") or []) == prompt_tokens)
