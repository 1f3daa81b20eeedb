"""Harness overhead of a ladder level: oracle's runner vs a bare httpx script, same server, same requests.

    python benchmarks/ladder_overhead.py --levels 8,64 --rounds 5 --max-tokens 32

Starts the embedded llama-server (SmolLM2-135M, `-np` = the largest level) once and a gate
session against it (its c1 run is not timed). Then per level and round it runs the level
through oracle (`GateSession.ladder_check`: streamed, parsed into records, each record saved,
compared with c1, split views decoded, the report written) and the same requests through a
bare async httpx script (streamed, lines read, nothing kept), alternating which goes first.
Prints the wall-time ratio oracle/bare (min / median / max) and the achieved overlap per level.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from oracle.backends import CompletionRequest, make_backend
from oracle.targets.embedded import default_model, embedded_command, llama_cpp_tools
from oracle.run.ladder import ladder_waves
from oracle.options import GateOptions
from oracle.gate.session import GateSession
from oracle.targets.launched import LaunchedServer


def bare_level(url: str, bodies: list[dict]) -> float:
    async def go() -> None:
        limits = httpx.Limits(max_connections=len(bodies), max_keepalive_connections=len(bodies))
        async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
            async def one(body: dict) -> None:
                async with client.stream("POST", "/completion", json=body) as r:
                    async for line in r.aiter_lines():
                        if line.startswith("data: ") and '"stop":true' in line:
                            break
            await asyncio.gather(*(one(b) for b in bodies))

    t0 = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--levels", default="8,64")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--logprobs", type=int, default=5)
    a = ap.parse_args()
    levels = [int(x) for x in a.levels.split(",")]
    tools, model = llama_cpp_tools(), default_model()
    slots = max(levels)
    with tempfile.TemporaryDirectory() as tmp:
        command = embedded_command(tools, model, f"-np {slots} -c {slots * 256}")
        server = LaunchedServer(command, log_dir=Path(tmp), env=tools.env)
        server.start(lambda u: make_backend("llamacpp", u).healthy())
        try:
            gate = GateSession(_options(server.url, Path(tmp) / "report", a))
            gate.start()
            gate.ensure_run()
            backend, prompts = gate.backend, gate.rendered
            print(f"llama-server -np {slots}, {len(prompts)} prompts x {a.max_tokens} tokens, "
                  f"{a.rounds} rounds per level, {sys.platform}")
            for level in levels:
                waves = ladder_waves(prompts, level, "cycle")
                bodies = [backend.request_body(_request(p, a)) for w in waves for p, _ in w]
                ratios, overlaps = [], []
                for r in range(a.rounds):
                    order = ("oracle", "bare") if r % 2 == 0 else ("bare", "oracle")
                    times = {}
                    for who in order:
                        if who == "bare":
                            times[who] = bare_level(server.url, bodies)
                        else:
                            t0 = time.perf_counter()
                            check = gate.ladder_check(level)
                            times[who] = time.perf_counter() - t0
                            overlaps.append(check.evidence["overlap"]["reached"])
                    ratios.append(times["oracle"] / times["bare"])
                print(f"c{level}: {len(bodies)} requests in {len(waves)} wave(s); oracle/bare wall-time ratio "
                      f"min {min(ratios):.3f} median {statistics.median(ratios):.3f} max {max(ratios):.3f}; "
                      f"achieved overlap min {min(overlaps)} max {max(overlaps)} of {level}")
        finally:
            server.stop()


def _options(url: str, report: Path, a) -> GateOptions:
    return GateOptions(backend="llamacpp", url=url, launch=None, model=None, server_args="", tokenizer=None,
                       suite="default", record=None, record_overwrite=False, reference_kind="mtp0", reference=None,
                       report_dir=report, logprobs=a.logprobs, max_tokens=a.max_tokens, seed=1234,
                       request_timeout=600, near_tie_nats=0.5, allow_near_ties=False, allow_inconclusive=(),
                       speculative=False)


def _request(p, a) -> CompletionRequest:
    return CompletionRequest(prompt_ids=p.ids, max_tokens=p.prompt.max_tokens, logprobs=a.logprobs, seed=1234)


if __name__ == "__main__":
    main()
