"""The bisect run: A twice, B once, then delta debugging over their differences, then the answer checked both ways.

    code = BisectSession(config).run()     # 0 culprit named / nothing to bisect, 1 budget spent, 2 A unreproducible
                                           # or interrupted (the report says what finished)

A's first run is the record every other run is compared with, token for token; A's second run proves A
reproducible (else nothing can be bisected against it). Probes send only the prompts that diverged under B;
a probe is bad when any of its `--trials` server starts diverges on any of them.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from oracle.backends import RequestFailed
from oracle.bisect.ddmin import ddmin
from oracle.launch_command import Change, apply, differences
from oracle.bisect.options import BisectConfig
from oracle.bisect.probe import ServerRun, ServerStarts, compare_runs, first_split
from oracle.bisect.report import write_report
from oracle.store.stamps import utc_now
from oracle.terminal_lines import TerminalLines
from oracle.redaction import redact_command, remember_secrets
from oracle.run.prompts import PromptMismatch
from oracle.run.runner import RunInterrupted
from oracle.tool_run import StopWords, run_stopping

__all__ = ["BisectSession", "Probe", "together"]

OK, BUDGET, STOPPED = 0, 1, 2
STOP_WORDS = StopWords(server="a server did not start", failures=(RunInterrupted, RequestFailed, PromptMismatch))


def together(labels) -> str:
    """A set of changes as the answer names it: "`-np 4` together with `--ladder 4`"."""
    return " together with ".join(f"`{label}`" for label in labels)


@dataclass
class Probe:
    number: int
    role: str  # "search" (ddmin) or "verify" (B without the culprit)
    changes: tuple[Change, ...]
    command: str  # redacted, {port} unfilled
    trials: list[ServerRun] = field(default_factory=list)
    finished: bool = False  # False: interrupted before its verdict

    @property
    def verdict(self) -> str:
        return "bad" if self.bad else "good" if self.finished else "unfinished"

    @property
    def bad(self) -> bool:
        return any(t.diverged for t in self.trials)

    def diverged_prompts(self) -> set[str]:
        return {r.prompt for t in self.trials for r in t.diverged}

    def split_words(self) -> str:
        split = first_split([r for t in self.trials for r in t.rows])
        return f"{split.prompt} splits at token {split.first_divergence}" if split else "exact"

    def as_json(self) -> dict:
        split = first_split([r for t in self.trials for r in t.rows])
        return {"number": self.number, "role": self.role, "changes": [c.label for c in self.changes],
                "command": self.command, "verdict": self.verdict,
                "first_divergence": {"prompt": split.prompt, "token": split.first_divergence} if split else None,
                "diverged": sorted(self.diverged_prompts()), "wall_s": round(sum(t.wall_s for t in self.trials), 2),
                "trials": [t.as_json() for t in self.trials]}


class BisectSession(TerminalLines):
    def __init__(self, config: BisectConfig, out=None) -> None:
        self.config, self.out = config, out or sys.stdout
        self.lines_out = self.out
        remember_secrets(commands=(config.good, config.bad))
        self.changes = differences(config.a, config.b)
        self.starts = ServerStarts(backend=config.backend, log_dir=config.report_dir / "servers",
                                   concurrency=config.concurrency, seed=config.seed,
                                   request_timeout=config.request_timeout, launch_timeout=config.launch_timeout)
        self.runs: list[ServerRun] = []
        self.probes: list[Probe] = []
        self.by_set: dict[frozenset[int], Probe] = {}
        self.diverged: list[str] = []
        self._pending = False  # a progress line waits for its verdict
        self.data = self._header()

    # -- the run ------------------------------------------------------------------------------
    def run(self) -> int:
        return run_stopping(self._run, stop=self._stop, cleanup=self.starts.stop, words=STOP_WORDS)

    def _run(self) -> int:
        self._write()
        if not self.changes:
            return self._finish(OK, "nothing-to-bisect", "A and B are the same command; nothing to bisect")
        self._say(f"oracle bisect: {len(self.changes)} difference(s) between A and B: "
                  + ", ".join(f"`{c.label}`" for c in self.changes))
        self._baseline("A run 1", self.config.good, suite=self.config.suite)
        a2 = self._baseline("A run 2", self.config.good)
        split = first_split(a2.rows)
        if split:
            return self._finish(STOPPED, "unreproducible",
                                f"A is not reproducible (prompt {split.prompt} splits at token "
                                f"{split.first_divergence} between two runs); nothing can be bisected against it")
        b = self._baseline("B", self.config.bad)
        if not b.diverged:
            return self._finish(OK, "nothing-to-bisect", "B reproduces A; nothing to bisect")
        self.diverged = [r.prompt for r in b.diverged]
        self.data["diverged"] = self.diverged
        result = ddmin(self.changes, lambda subset: self._probe(subset, "search").bad,
                       budget=self.config.max_probes)
        culprit = together(c.label for c in result.minimal)
        self.data["culprit"] = [c.label for c in result.minimal]
        if not result.proven:
            return self._finish(BUDGET, "budget", f"the budget ran out after {len(self.probes)} probes (--max-probes "
                                f"{self.config.max_probes}) before a minimal set was proven; best set so far: "
                                f"{culprit}")
        return self._finish(OK, "culprit", f"culprit: {culprit} ({self._checked(result.minimal, b)})")

    def _checked(self, minimal: tuple[Change, ...], b: ServerRun) -> str:
        """The answer both ways: the culprit alone on A (its probe, or B itself), and B without it."""
        n = len(self.diverged)
        pronoun = "it" if len(minimal) == 1 else "them"
        alone = self._probe_of(minimal)
        reproduced = len(alone.diverged_prompts()) if alone else len(b.diverged)
        words = f"{'alone' if len(minimal) == 1 else 'together'} reproduce{'s' * (len(minimal) == 1)} " \
                f"{reproduced}/{n} divergences"
        rest = tuple(c for c in self.changes if c not in minimal)
        if not rest:
            return f"{words}; removing {pronoun} from B restores {n}/{n} exact: B without {pronoun} is A"
        without = self._probe_of(rest)
        if without is None:
            if len(self.probes) >= self.config.max_probes:
                return f"{words}; removing {pronoun} from B was not checked: --max-probes reached"
            without = self._probe(rest, "verify")
        restored = n - len(without.diverged_prompts() & set(self.diverged))
        words += f"; removing {pronoun} from B restores {restored}/{n} exact"
        if restored < n:
            words += (f": B without {pronoun} still diverges ({without.split_words()}), so another change changes "
                      f"the outputs too; bisect again with --bad set to B without {pronoun}")
        return words

    def _probe_of(self, changes: tuple[Change, ...]) -> Probe | None:
        return self.by_set.get(frozenset(self.changes.index(c) for c in changes))

    # -- server starts ------------------------------------------------------------------------
    def _baseline(self, name: str, command: str, suite=None) -> ServerRun:
        self._start_line(f"{name}: starting the server ... ")
        run = self.starts.run(name, command, suite=suite)
        reference = self.runs[0].records if self.runs else run.records
        run.rows = compare_runs(reference, run.records)
        self.runs.append(run)
        role = "compared" if self.runs[1:] else "reference"  # A run 1: what every other run is compared with
        self.data["runs"].append({**run.as_json(), "role": role, "command": redact_command(command)})
        if not self.runs[1:]:
            self.data["prompts"] = list(run.records)
            verdict = f"{len(run.records)} prompts recorded"
        else:
            verdict = f"{len(run.rows) - len(run.diverged)}/{len(run.rows)} exact vs A run 1"
            split = first_split(run.rows)
            verdict += f" ({split.prompt} splits at token {split.first_divergence})" if split else ""
        self._end_line(f"{verdict} {run.wall_s:.1f} s")
        self._write()
        return run

    def _probe(self, subset: tuple[Change, ...], role: str) -> Probe:
        number = len(self.probes) + 1
        labels = ", ".join(c.label for c in subset)
        command = apply(self.config.a, subset).render()
        probe = Probe(number, role, subset, redact_command(command))
        self.probes.append(probe)
        self.by_set[frozenset(self.changes.index(c) for c in subset)] = probe
        self._start_line(f"probe {number}/{self.config.max_probes}: {labels} ... ")
        t0 = time.perf_counter()
        try:
            for trial in range(1, self.config.trials + 1):
                run = self.starts.run(f"probe {number} trial {trial}", command, only=self.diverged)
                run.rows = compare_runs(self.runs[0].records, run.records)
                probe.trials.append(run)
                if run.diverged:
                    break  # one diverging start makes the probe bad
            probe.finished = True
        finally:
            self.data["probes"] = [p.as_json() for p in self.probes]
            self._write()
        verdict = f"bad ({probe.split_words()})" if probe.bad else \
            f"good ({len(self.diverged)}/{len(self.diverged)} exact in {len(probe.trials)} starts)"
        self._end_line(f"{verdict} {time.perf_counter() - t0:.1f} s")
        return probe

    # -- the report and the terminal ----------------------------------------------------------
    def _header(self) -> dict:
        c = self.config
        return {"schema_version": 1, "status": "running", "exit_code": None, "answer": None, "culprit": [],
                "good": redact_command(c.good), "bad": redact_command(c.bad), "backend": c.backend,
                "suite": {"name": c.suite.name, "path": c.suite.path, "sha256": c.suite.sha256},
                "prompts": c.suite.ids(), "max_tokens": c.max_tokens, "concurrency": c.concurrency,
                "trials": c.trials, "max_probes": c.max_probes, "seed": c.seed,
                "changes": [{"kind": ch.kind, "label": ch.label} for ch in self.changes], "runs": [],
                "diverged": [], "probes": [], "server_starts": 0, "interruption": None,
                "started_utc": utc_now(), "written_utc": None}

    def _write(self) -> None:
        self.data["server_starts"] = self.starts.starts
        self.data["written_utc"] = utc_now()
        write_report(self.config.report_dir, self.data)

    def _finish(self, code: int, status: str, answer: str) -> int:
        self.data.update(status=status, exit_code=code, answer=answer)
        self._write()
        self._say(f"oracle bisect: {answer}")
        self._say(f"report: {self.config.report_dir / 'bisect.md'} (and bisect.json, bisect.html)")
        return code

    def _stop(self, why: str) -> int:
        self._end_line("stopped")
        during = f"during {self.starts.running}" if self.starts.running else "between server starts"
        done = sum(1 for p in self.probes if p.finished)
        self.data["interruption"] = (f"{during}: {why}. The bisect stops here; nothing was retried; {done} "
                                     "probe(s) finished are in this report.")
        first = why.splitlines()[0]
        return self._finish(STOPPED, "interrupted", f"interrupted {during}: "
                                                    f"{first[:200] + ' ...' if len(first) > 200 else first}")
