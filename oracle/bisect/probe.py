"""One server start of a launch command: start it as the gate starts a --launch target, send the prompts greedy
as exact token ids, keep every complete token array, stop it; and the comparison of such a run with A's records.

    starter = ServerStarts(backend="llamacpp", log_dir=folder / "servers", concurrency=1, seed=1234)
    run = starter.run("A run 1", command, prompts=None)        # renders the suite with this server (A's first run)
    rows = compare_runs(a.records, run.records)                # one row per prompt: verdict, first divergence

Never retries: a server that does not come up raises TargetError, a failed request RunInterrupted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from oracle.compare.tokens import TokenSide, compare_tokens
from oracle.compare.verdicts import DIVERGENT, EXACT
from oracle.run.prompting import RenderedPrompt
from oracle.run.prompts import PromptSet
from oracle.run.runner import run_waves
from oracle.run.suite import Suite
from oracle.store.records import Condition, Record
from oracle.targets.launched import LaunchedTarget

__all__ = ["Row", "ServerRun", "ServerStarts", "compare_runs", "first_split"]


@dataclass(frozen=True)
class Row:
    """A prompt of a run against A's first run."""

    prompt: str
    verdict: str  # exact / divergent
    first_divergence: int | None  # where the two stop agreeing (None: exact)
    reason: str = ""

    @property
    def exact(self) -> bool:
        return self.verdict == EXACT

    def as_json(self) -> dict:
        return {"prompt": self.prompt, "verdict": self.verdict, "first_divergence": self.first_divergence,
                "reason": self.reason}


@dataclass
class ServerRun:
    name: str
    command: str  # as started, {port} unfilled
    records: dict[str, Record]
    wall_s: float
    log: str | None
    rows: list[Row] = field(default_factory=list)  # filled by the caller once compared with A

    @property
    def diverged(self) -> list[Row]:
        return [r for r in self.rows if not r.exact]

    def as_json(self) -> dict:
        return {"name": self.name, "wall_s": round(self.wall_s, 2), "log": self.log,
                "rows": [r.as_json() for r in self.rows]}


def first_split(rows: Sequence[Row]) -> Row | None:
    """The diverged row that splits earliest."""
    split = [r for r in rows if not r.exact]
    return min(split, key=lambda r: r.first_divergence if r.first_divergence is not None else 1 << 30) \
        if split else None


def compare_runs(reference: dict[str, Record], candidate: dict[str, Record]) -> list[Row]:
    rows = []
    for pid, rec in candidate.items():
        result = compare_tokens(TokenSide.of(reference[pid]), TokenSide.of(rec))
        first = None if result.exact else result.split_position
        rows.append(Row(pid, EXACT if result.exact else DIVERGENT, first, "" if result.exact else result.reason))
    return rows


class ServerStarts:
    """Starts of launch commands, each with its own log folder; the suite rendered once, by the first."""

    def __init__(self, *, backend: str, log_dir: Path, concurrency: int, seed: int, request_timeout: float,
                 launch_timeout: float) -> None:
        self.backend_name, self.log_dir = backend, log_dir
        self.concurrency, self.seed = concurrency, seed
        self.request_timeout, self.launch_timeout = request_timeout, launch_timeout
        self.prompts: list[RenderedPrompt] = []
        self.starts = 0
        self.current = None  # the target running now (stopped on the way out, also on Ctrl-C)
        self.running: str | None = None  # the name of the start under way

    def run(self, name: str, command: str, *, only: Sequence[str] | None = None, suite: Suite | None = None) \
            -> ServerRun:
        """One start of command; with suite (A's first run), the suite is first rendered to token ids with this
        server's chat template and tokenizer, and every later start sends those same ids (only: these prompts)."""
        self.starts += 1
        self.running = name
        folder = self.log_dir / f"{self.starts:02d}-{_slug(name)}"
        t0 = time.perf_counter()
        target = LaunchedTarget(self.backend_name, command, kind="launch", log_dir=folder, env=None, worker=0,
                                timeout_s=self.request_timeout, launch_timeout_s=self.launch_timeout)
        self.current = target
        try:
            backend = target.up()
            if suite is not None:
                self.prompts = PromptSet.open(suite, backend, tokenizer=None, model_path=None).rendered
            chosen = [p for p in self.prompts if only is None or p.id in only]
            waves = [[(p, 0) for p in chosen[k:k + self.concurrency]]
                     for k in range(0, len(chosen), self.concurrency)]
            result = run_waves(backend, waves, Condition(boot=self.starts, concurrency=self.concurrency),
                               logprobs=0, seed=self.seed)
        finally:
            self.stop()
        self.running = None
        log = str(target.log_path) if target.log_path else None
        by_id = {r.id: r for r in result.records}
        records = {p.id: by_id[p.id] for p in chosen}  # in the suite's order, whatever order they finished in
        return ServerRun(name, command, records, time.perf_counter() - t0, log)

    def stop(self) -> None:
        target, self.current = self.current, None
        if target is not None:
            target.stop()


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
