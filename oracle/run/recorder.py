"""The recorder: runs a condition's waves, saves every record the moment it finishes, and keeps the report
on disk current (paced while many requests finish together). Never retries: a failed request interrupts.

    recorder = Recorder(report, backend, logprobs=5, seed=1234)
    result = recorder.run(PRIMARY, one_at_a_time(prompts))   # None when a request failed
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Sequence

from oracle.backends import Backend
from oracle.run.progress import QuietProgress
from oracle.run.prompting import RenderedPrompt
from oracle.run.runner import RunInterrupted, RunResult, WriteFailed, run_waves
from oracle.run.warmup import warm_up
from oracle.store.records import PRIMARY, Record, save_record

__all__ = ["Recorder"]

WAVE_REPORT_EVERY_S = 0.5  # in a wave many records finish together: the report is rewritten at most this often


class Recorder:
    """report: the run's `ReportFile` (state + folder); records: each prompt's primary (boot1-c1) record."""

    def __init__(self, report, backend: Backend | None, *, logprobs: int, seed: int, sampling=None) -> None:
        self.report = report
        self.backend = backend  # replaced after a restart
        self.logprobs, self.seed = logprobs, seed
        self.sampling = sampling  # run/sampling.Sampling: every condition samples with it (None: greedy)
        self.records: dict[str, Record] = {}
        self.progress = QuietProgress()  # the plugin puts a terminal line here unless -q
        self.server_log: Callable[[], Path | None] = lambda: None  # the running server's log, when oracle has one
        self._written = 0.0

    @property
    def folder(self):
        return self.report.folder / "records"

    def run(self, condition, waves: Sequence[Sequence[tuple[RenderedPrompt, int]]], *,
            staggered: bool = False, keep: Callable[[Record], bool] | None = None) -> RunResult | None:
        """One condition's waves with its progress line; None when a request failed (the run is interrupted,
        every record finished before it is on disk and the report says where). keep: which records are saved
        (None: all; the unrelated neighbours of `--neighbours` are sent, timed and never saved)."""
        pace = WAVE_REPORT_EVERY_S if any(len(w) > 1 for w in waves) else 0.0
        self.progress.start(condition.key, sum(len(w) for w in waves))
        try:
            result = run_waves(self.backend, waves, condition, logprobs=self.logprobs, seed=self.seed,
                               on_record=lambda record: self._keep(record, pace, keep), staggered=staggered,
                               sampling=self.sampling)
        except RunInterrupted as exc:
            look = "" if isinstance(exc.__cause__, WriteFailed) else f"; {self._look()}"  # the disk, not the server
            self.report.state.interruption = (f"{exc}. The run stops here. No request was retried; "
                                              f"{len(exc.finished)} finished record(s) of that condition kept in "
                                              f"{self.folder}{look}")
            self.report.write()
            return None
        finally:
            self.progress.end()
        return result

    def warm_up(self, prompts, requests: int) -> dict | None:
        """The warm-up requests before the primary run (never saved, never compared); None when one failed."""
        self.progress.start("warm-up", requests)
        try:
            return warm_up(self.backend, prompts, requests=requests, logprobs=self.logprobs, seed=self.seed)
        except RunInterrupted as exc:
            self.report.state.interruption = (f"warm-up: {exc}. The run stops here. No request was retried; nothing "
                                              f"was timed or compared; {self._look()}")
            self.report.write()
            return None
        finally:
            self.progress.end()

    def _look(self) -> str:
        log = self.server_log()
        if log:
            return f"check the server log {log}"
        in_process = self.backend is not None and self.backend.capabilities.in_process
        return "no server log: the model runs in this process, its own error is quoted above" if in_process \
            else "check the server's log"

    def _keep(self, record: Record, pace: float, keep: Callable[[Record], bool] | None = None) -> None:
        if keep is not None and not keep(record):
            self.progress.record(len(record.completion_ids))  # sent and counted, never saved
            return
        save_record(self.folder, record)
        if record.condition == PRIMARY:
            self.records[record.id] = record
        self.report.state.finished[record.report_key] = record.meta()
        now = time.monotonic()
        if now - self._written >= pace:
            self.report.write()
            self._written = now
        self.progress.record(len(record.completion_ids))
