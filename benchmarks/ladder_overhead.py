"""Harness overhead of a ladder level: oracle's runner vs a bare httpx script, same server, same requests.

    python benchmarks/ladder_overhead.py --levels 8,64 --rounds 5 --max-tokens 16 [--prompts N]

Starts the embedded llama-server (SmolLM2-135M, `-np` = the largest level) once, renders the
default suite with the server's chat template and the GGUF's tokenizer (`PromptSet`, as a gate
does) and runs it once at c1 (not timed). Then per level and round it runs the level as a gate
does, from the same public pieces: the `Recorder` (`run_waves`: streamed, parsed into records,
each record saved the moment it finishes, the report rewritten as records come), then every
record compared with its prompt's c1 record (`compare_condition`), the split view of each
non-exact prompt decoded, the level's check made and the report written; and it sends the
same requests through a bare async httpx script (streamed, lines read, nothing kept),
alternating which goes first. Prints the wall-time ratio oracle/bare (min / median / max),
the records' verdicts and the achieved overlap per level.
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
from oracle.checks import SECTIONS, fresh_states
from oracle.compare.conditions import compare_condition, condition_check, first_split
from oracle.compare.splits import split_view
from oracle.compare.verdicts import EXACT
from oracle.report.state import ReportState
from oracle.report.writer import ReportFile
from oracle.run.ladder import ladder_condition, ladder_waves
from oracle.run.prompts import PromptSet
from oracle.run.recorder import Recorder
from oracle.run.runner import one_at_a_time
from oracle.run.suite import load_suite
from oracle.store.records import PRIMARY
from oracle.targets.embedded import default_model, embedded_command, llama_cpp_tools
from oracle.targets.launched import LaunchedServer

SEED = 1234
NEAR_TIE_NATS = 0.5  # the gate's default --near-tie-nats


def bare_level(url: str, bodies: list[dict]) -> float:
    async def go() -> None:
        limits = httpx.Limits(max_connections=len(bodies), max_keepalive_connections=len(bodies))
        async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
            async def one(body: dict) -> None:
                async with client.stream("POST", "/completion", json=body) as r:
                    r.raise_for_status()
                    async for line in r.aiter_lines():
                        if line.startswith("data: ") and '"stop":true' in line:
                            break
            await asyncio.gather(*(one(b) for b in bodies))

    t0 = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - t0


class Level:
    """One ladder level run as the gate runs it; `run()` returns (wall seconds, verdict counts, achieved overlap)."""

    def __init__(self, recorder: Recorder, prompts: PromptSet, level: int) -> None:
        self.recorder, self.prompts, self.level = recorder, prompts, level
        self.waves = ladder_waves(prompts.rendered, level, "cycle")

    def run(self) -> tuple[float, dict[str, int], int]:
        t0 = time.perf_counter()
        result = self.recorder.run(ladder_condition(self.level), self.waves)
        if result is None:
            raise SystemExit(f"c{self.level}: {self.recorder.report.state.interruption}")
        c1 = self.recorder.records
        rows = compare_condition(result.records, c1, None, None, near_tie_nats=NEAR_TIE_NATS)
        by_key, shown = {r.key: r for r in result.records}, set()
        for row in sorted(rows, key=lambda r: (first_split(r) is None, first_split(r) or 0)):
            if row["verdict"] != EXACT and row["prompt"] not in shown:
                shown.add(row["prompt"])
                row["split"] = split_view(c1[row["prompt"]], by_key[row["record"]], row["vs_c1"]["first_divergence"],
                                          self.prompts.decode)
        check = condition_check(f"ladder[c{self.level}]", "ladder", f"c{self.level}", rows, required=len(rows),
                                recording=False)
        reached = min(result.wave_overlap) if result.wave_overlap else 0
        state = self.recorder.report.state
        state.judged(check)
        state.apply({"ladder": {f"c{self.level}": {  # the level's summary, as the gate's report holds it
            "verdict": check.verdict, "detail": check.detail, "counts": check.evidence["counts"], "records": len(rows),
            "required": len(rows), "overlap": {"asked": self.level, "reached": reached, "per_wave": result.wave_overlap,
                                               "server_peak": result.server_peak, "waves": len(self.waves)},
            "first_divergences": sorted(r["vs_c1"]["first_divergence"] for r in rows
                                        if r["vs_c1"]["first_divergence"] is not None)}}})
        self.recorder.report.write()
        return time.perf_counter() - t0, check.evidence["counts"], reached


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--levels", default="8,64")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--logprobs", type=int, default=5)
    ap.add_argument("--prompts", type=int, default=0, metavar="N",
                    help="the default suite's first N prompts (default: all; CI's smoke size runs 4)")
    a = ap.parse_args()
    levels = [int(x) for x in a.levels.split(",")]
    tools, model = llama_cpp_tools(), default_model()
    slots = max(levels)
    with tempfile.TemporaryDirectory(prefix="oracle-bench-") as tmp:
        # Each slot gets room for the suite's longest prompt (under 256 tokens) and its completion.
        command = embedded_command(tools, model, f"-np {slots} -c {slots * (256 + a.max_tokens)}")
        server = LaunchedServer(command, log_dir=Path(tmp), env=tools.env)
        server.start(lambda u: make_backend("llamacpp", u).healthy())
        try:
            backend = make_backend("llamacpp", server.url)
            suite = load_suite("default").with_max_tokens(a.max_tokens)
            if a.prompts:
                suite = suite.only(set(suite.ids()[:a.prompts]))
            prompts = PromptSet.open(suite, backend, tokenizer=None, model_path=model)
            report = ReportFile(Path(tmp) / "report", ReportState(mode="run", backend="llamacpp",
                                                                  prompt_ids=suite.ids(), states=fresh_states()),
                                SECTIONS)
            recorder = Recorder(report, backend, logprobs=a.logprobs, seed=SEED)
            if recorder.run(PRIMARY, one_at_a_time(prompts.rendered)) is None:  # c1: what each level is compared with
                raise SystemExit(f"c1: {report.state.interruption}")
            print(f"llama-server -np {slots}, {len(prompts.rendered)} prompts x {a.max_tokens} tokens, "
                  f"{a.rounds} round(s) per level, {sys.platform}")
            for level in levels:
                runner = Level(recorder, prompts, level)
                bodies = [backend.request_body(CompletionRequest(prompt_ids=p.ids, max_tokens=p.prompt.max_tokens,
                                                                 logprobs=a.logprobs, seed=SEED))
                          for wave in runner.waves for p, _ in wave]
                ratios, overlaps, exact = [], [], []
                for r in range(a.rounds):
                    order = ("oracle", "bare") if r % 2 == 0 else ("bare", "oracle")
                    times = {}
                    for who in order:
                        if who == "bare":
                            times[who] = bare_level(server.url, bodies)
                        else:
                            times[who], counts, reached = runner.run()
                            overlaps.append(reached)
                            exact.append(counts[EXACT])
                    ratios.append(times["oracle"] / times["bare"])
                print(f"c{level}: {len(bodies)} requests in {len(runner.waves)} wave(s); oracle/bare wall-time ratio "
                      f"min {min(ratios):.3f} median {statistics.median(ratios):.3f} max {max(ratios):.3f}; "
                      f"exact vs c1 min {min(exact)} max {max(exact)} of {len(bodies)}; "
                      f"achieved overlap min {min(overlaps)} max {max(overlaps)} of {level}", flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
