"""The client is never the bottleneck: oracle's ingest ceiling against recorded streams, and its clock's fidelity.

    python benchmarks/client_ingest.py --levels 1,8,64 --requests 512 --rounds 3

A replay server, in a process of its own, answers oracle's requests with streams recorded from the real
servers (benchmarks/fixtures/: llama-server's /completion and vLLM's /v1/completions, 128 tokens each with
the top-20 logprobs of every token), one HTTP chunk per event as those servers send them.

Ceiling: the server sends each answer as fast as it can. Per family and level c (c connections, c requests
in flight), the real backend's `complete()` (the bytes split into events, the JSON parsed, ids, logprobs
and top-k taken into a `Completion`) is timed on its two HTTP paths, side by side with a bare client of the
same library reading the same streams, each round running the five in turn (the order rotated by round):
- oracle aiohttp: `complete()` as a run calls it (aiohttp, llhttp's parser in C);
- bare aiohttp: `async for line in response.content` (lines split, nothing parsed, no JSON);
- bare aiohttp+json: the same, and each event's JSON decoded by msgspec into plain dicts and lists (the floor
  of reading these streams at all: what a client that parses the answers pays before taking anything from them);
- oracle httpx: `complete()` on httpx and h11 (the path of a scripted transport, and oracle's before);
- bare httpx: `aiter_lines()` (lines decoded and split, nothing parsed).
The bare clients stop at the answer's last event, where oracle stops; the bare aiohttp clients open a connection
per request as oracle's aiohttp path does (force_close: a POST is never written on a kept-alive connection the
server may be closing), and both httpx clients keep connections alive, so each pair connects alike.
Tokens/s are the best of the rounds; CPU time per token is `time.process_time()` of this (the client)
process over the tokens it took in.

Fidelity: the server sends one token every 20 ms (the recorded events cycled to 110 tokens). The conventional
rate `99 / (t100 - t1)` of each completion's token times must read 50 tok/s: the median within 2 % at c1
and within 5 % at c64, or the script exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import multiprocessing
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import httpx
import msgspec

from oracle.backends import CompletionRequest, make_backend
from oracle.speed.figures import conventional_rate

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PATHS = {"llamacpp": "/completion", "vllm": "/v1/completions"}
LAST = {"llamacpp": '"stop":true', "vllm": "data: [DONE]"}  # in the line of the last event
MODEL = "smollm2-135m-instruct"  # the name the replay server gives in /v1/models
TOP = 20
INTERVAL_S, PACED_TOKENS = 0.020, 110
FIDELITY_BOUNDS = {1: 0.02, 64: 0.05}  # level -> allowed relative error of the median rate (others: 5 %)


# -- the recorded streams ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    frame: bytes  # the event as one HTTP/1.1 chunk
    tokens: int
    finishing: bool  # the answer's last token event, or after it


def recorded(family: str) -> list[Event]:
    raw = gzip.decompress((FIXTURES / f"{family}.sse.gz").read_bytes())
    events, finished = [], False
    for block in raw.split(b"\n\n"):
        if not block.strip():
            continue
        data = block.removeprefix(b"data: ")
        message = None if data == b"[DONE]" else json.loads(data)
        if family == "llamacpp":
            tokens = len(message["tokens"])
            finished = finished or bool(message.get("stop"))
        else:
            choices = (message or {}).get("choices") or []
            tokens = sum(len(c.get("token_ids") or []) for c in choices)
            finished = finished or message is None or any(c.get("finish_reason") for c in choices) or not choices
        body = block + b"\n\n"
        events.append(Event(b"%x\r\n%s\r\n" % (len(body), body), tokens, finished))
    return events


def _recounted(event: Event, n: int) -> Event:
    """The event with the server's own count of generated tokens (llama-server's timings.predicted_n, vLLM's
    usage.completion_tokens) set to n: a stream cycled to another length still counts its ids right."""
    block = event.frame.split(b"\r\n", 1)[1][:-2].removesuffix(b"\n\n")
    data = block.removeprefix(b"data: ")
    if data == b"[DONE]":
        return event
    message = json.loads(data)
    if "timings" in message:
        message["timings"]["predicted_n"] = n
    if message.get("usage"):
        message["usage"]["completion_tokens"] = n
    body = b"data: " + json.dumps(message).encode() + b"\n\n"
    return Event(b"%x\r\n%s\r\n" % (len(body), body), event.tokens, event.finishing)


def paced(events: list[Event], tokens: int) -> list[Event]:
    """The recorded token events cycled to `tokens` tokens, then the recorded ending (its counts made `tokens`)."""
    body = [e for e in events if not e.finishing]
    tail = [e for e in events if e.finishing]
    out, n, i = [], sum(e.tokens for e in tail), 0
    while n < tokens:
        out.append(body[i % len(body)])
        n, i = n + body[i % len(body)].tokens, i + 1
    return out + [_recounted(e, n) for e in tail]


# -- the replay server (its own process) ------------------------------------------------------------------
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def _json_answer(value) -> bytes:
    body = json.dumps(value).encode()
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)


def serve(ready, interval_s: float) -> None:
    """Answers GET /health and /v1/models, and POST of either family's path with its stream: at once
    (interval 0) or one token per interval_s on a fixed schedule from the request's arrival."""
    streams = {PATHS[f]: recorded(f) for f in PATHS}
    if interval_s:
        streams = {path: paced(events, PACED_TOKENS) for path, events in streams.items()}
    whole = {path: HEAD + b"".join(e.frame for e in events) + b"0\r\n\r\n" for path, events in streams.items()}
    models = _json_answer({"object": "list", "data": [{"id": MODEL, "root": MODEL, "max_model_len": 8192}]})

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method, path = head.split(b" ", 2)[:2]
                length = next((int(line.split(b":")[1]) for line in head.lower().split(b"\r\n")
                               if line.startswith(b"content-length:")), 0)
                await reader.readexactly(length)
                path = path.decode()
                if method == b"GET":
                    writer.write(models if path == "/v1/models" else _json_answer({"status": "ok"}))
                elif not interval_s:
                    writer.write(whole[path])
                else:
                    writer.write(HEAD)
                    start, sent = time.perf_counter(), 0
                    for event in streams[path]:
                        wait = start + sent * interval_s - time.perf_counter()
                        if wait > 0:
                            await asyncio.sleep(wait)
                        writer.write(event.frame)
                        sent += event.tokens
                    writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(answer, "127.0.0.1", 0, backlog=1024)
        ready.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())


class ReplayServer:
    def __init__(self, interval_s: float = 0.0) -> None:
        context = multiprocessing.get_context("spawn")
        ready = context.Queue()
        self.process = context.Process(target=serve, args=(ready, interval_s), daemon=True)
        self.process.start()
        self.url = f"http://127.0.0.1:{ready.get(timeout=60)}"

    def __enter__(self) -> ReplayServer:
        return self

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.join()


# -- the two clients --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    tokens: int
    wall_s: float
    cpu_s: float

    @property
    def rate(self) -> float:
        return self.tokens / self.wall_s

    @property
    def cpu_us(self) -> float:
        return 1e6 * self.cpu_s / self.tokens


def oracle_run(backend, level: int, requests: int, *, keep: bool = False) -> tuple[Run, list]:
    """The real backend's `complete()`; the completions are kept only when asked (`keep`)."""
    request = CompletionRequest(prompt_ids=tuple(range(1, 26)), max_tokens=128, logprobs=TOP)
    completions: list = []

    async def go() -> Run:
        async with backend.async_client(connections=level) as client:
            async def one() -> int:
                out = await backend.complete(client, request)
                if keep:
                    completions.append(out)
                return len(out.completion_ids)
            return await _timed(level, requests, one)
    return asyncio.run(go()), completions


async def _timed(level: int, requests: int, one) -> Run:
    left, counts = iter(range(requests)), []

    async def worker() -> None:
        for _ in left:
            counts.append(await one())
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(level)))
    return Run(sum(counts), time.perf_counter() - wall, time.process_time() - cpu)


def bare_run(url: str, family: str, body: dict, tokens: int, level: int, requests: int) -> Run:
    async def go() -> Run:
        limits = httpx.Limits(max_connections=level, max_keepalive_connections=level)
        async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
            async def one() -> int:
                async with client.stream("POST", PATHS[family], json=body) as r:
                    async for line in r.aiter_lines():
                        if LAST[family] in line:  # where oracle stops reading too
                            break
                return tokens
            return await _timed(level, requests, one)
    return asyncio.run(go())


def bare_aiohttp_run(url: str, family: str, body: dict, tokens: int, level: int, requests: int, *,
                     json_decoded: bool = False) -> Run:
    last, decode = LAST[family].encode(), msgspec.json.decode

    async def go() -> Run:
        connector = aiohttp.TCPConnector(limit=level, force_close=True)  # as oracle's StreamClient
        async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=600)) as client:
            async def one() -> int:
                async with client.post(url + PATHS[family], json=body) as r:
                    async for line in r.content:
                        if json_decoded and line.startswith(b"data: {"):
                            decode(line[6:])
                        if last in line:  # where oracle stops reading too
                            break
                return tokens
            return await _timed(level, requests, one)
    return asyncio.run(go())


# -- the figures ---------------------------------------------------------------------------------------------
CLIENTS = ("oracle aiohttp", "bare aiohttp", "oracle httpx", "bare httpx", "bare aiohttp+json")


def ceiling(family: str, levels: list[int], requests: int, rounds: int) -> None:
    with ReplayServer() as server:
        backend = make_backend(family, server.url)
        # The same backend on httpx: a scripted transport is read through httpx, a real one is httpx's own.
        on_httpx = make_backend(family, server.url, async_transport=httpx.AsyncHTTPTransport())
        body = backend.request_body(CompletionRequest(prompt_ids=tuple(range(1, 26)), max_tokens=128, logprobs=TOP))
        tokens = sum(e.tokens for e in recorded(family))
        oracle_run(backend, 1, 2)  # warm: connections, the model name, imports
        oracle_run(on_httpx, 1, 2)
        for level in levels:
            n = max(requests, level)
            runs = {
                "oracle aiohttp": lambda: oracle_run(backend, level, n)[0],
                "bare aiohttp": lambda: bare_aiohttp_run(server.url, family, body, tokens, level, n),
                "oracle httpx": lambda: oracle_run(on_httpx, level, n)[0],
                "bare httpx": lambda: bare_run(server.url, family, body, tokens, level, n),
                "bare aiohttp+json": lambda: bare_aiohttp_run(server.url, family, body, tokens, level, n,
                                                              json_decoded=True),
            }
            got: dict[str, list[Run]] = {name: [] for name in CLIENTS}
            for r in range(rounds):  # each round runs all five, the order rotated
                for name in CLIENTS[r % len(CLIENTS):] + CLIENTS[:r % len(CLIENTS)]:
                    got[name].append(runs[name]())
            best = {name: max(got[name], key=lambda x: x.rate) for name in CLIENTS}
            shown = ", ".join(f"{name} {b.rate:,.0f} tok/s ({b.cpu_us:.1f} us CPU/token)" for name, b in best.items())
            print(f"{family} c{level}: {shown}; oracle/bare: aiohttp "
                  f"{best['oracle aiohttp'].rate / best['bare aiohttp'].rate:.2f}, httpx "
                  f"{best['oracle httpx'].rate / best['bare httpx'].rate:.2f}; oracle aiohttp / bare httpx "
                  f"{best['oracle aiohttp'].rate / best['bare httpx'].rate:.2f}; oracle aiohttp / bare aiohttp+json "
                  f"{best['oracle aiohttp'].rate / best['bare aiohttp+json'].rate:.2f}; {n} requests x {tokens} "
                  f"tokens, top-{TOP}, best of {rounds}", flush=True)


def fidelity(family: str, levels: list[int], requests: int) -> bool:
    ok = True
    with ReplayServer(INTERVAL_S) as server:
        backend = make_backend(family, server.url)
        want = 1 / INTERVAL_S
        for level in levels:
            _, completions = oracle_run(backend, level, max(requests, level), keep=True)
            rates = [conventional_rate(c.token_times_s) for c in completions]
            if None in rates:
                print(f"{family} fidelity c{level}: a completion had under 101 tokens", flush=True)
                return False
            median = statistics.median(rates)
            bound = FIDELITY_BOUNDS.get(level, 0.05)
            error = median / want - 1
            ok = ok and abs(error) <= bound
            print(f"{family} fidelity c{level}: conventional rate median {median:.2f} tok/s (min {min(rates):.2f}, "
                  f"max {max(rates):.2f}) at one token per {INTERVAL_S * 1e3:.0f} ms = {want:.0f} tok/s: "
                  f"{error:+.2%} (bound {bound:.0%}) {'ok' if abs(error) <= bound else 'MISSED'}; "
                  f"{len(rates)} requests", flush=True)
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default="llamacpp,vllm", help="recorded streams to replay (default both)")
    ap.add_argument("--levels", default="1,8,64", help="concurrency levels of the ceiling (default 1,8,64)")
    ap.add_argument("--requests", type=int, default=512, help="requests per level and round (default 512)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per level; the best is shown (default 3)")
    ap.add_argument("--fidelity-levels", default="1,64", help="levels of the paced check (default 1,64)")
    ap.add_argument("--fidelity-requests", type=int, default=8,
                    help="paced requests per level, at least the level (default 8)")
    a = ap.parse_args()
    families = a.families.split(",")
    print(f"client process: Python {sys.version.split()[0]}, aiohttp {aiohttp.__version__}, httpx "
          f"{httpx.__version__}; replay server in its own process", flush=True)
    for family in families:
        ceiling(family, [int(x) for x in a.levels.split(",")], a.requests, a.rounds)
    ok = True
    for family in families:
        ok = fidelity(family, [int(x) for x in a.fidelity_levels.split(",")], a.fidelity_requests) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
