"""The repro run: read the gate report, search the smallest request that still diverges, verify it, write it.

    code = ReproSession(source, out=Path("DIR/repro"), max_probes=24).run()
    # 0 written (the divergence reproduced twice), 1 not reproduced (the report says so), 2 interrupted

The search's probes each start the candidate afresh (`search.Replayer`), at most `max_probes` of them; the
verify start is one more. repro.json / repro.md are rewritten after the search and at the end (`render.py`).
"""

from __future__ import annotations

import sys
import time

from oracle.repro.render import around_split, write_repro
from oracle.repro.search import Probe, Replayer, SearchResult, Verified, search, split_within
from oracle.repro.source import ReproSource
from oracle.terminal_lines import TerminalLines
from oracle.tool_run import StopWords, run_stopping

__all__ = ["ReproSession", "WRITTEN", "NOT_REPRODUCED", "STOPPED"]

WRITTEN, NOT_REPRODUCED, STOPPED = 0, 1, 2
STOP_WORDS = StopWords(server="the candidate's server did not start")


class ReproSession(TerminalLines):
    def __init__(self, source: ReproSource, *, out, max_probes: int = 24, stream=None,
                 launch_timeout: float = 600.0, request_timeout: float = 600.0) -> None:
        self.source, self.out, self.max_probes = source, out, max_probes
        self.stream = self.lines_out = stream or sys.stdout
        self.replayer = Replayer(source, log_dir=out / "servers", launch_timeout=launch_timeout,
                                 request_timeout=request_timeout)
        self.result: SearchResult | None = None
        self.probes: list[Probe] = []  # every finished probe, kept by an interrupted search too
        self.verified: Verified | None = None
        self.started = time.perf_counter()

    def run(self) -> int:
        return run_stopping(self._run, stop=self._stop, cleanup=self.replayer.stop, words=STOP_WORDS)

    def _run(self) -> int:
        s = self.source
        split = f" (it split at token {s.split})" if s.split is not None else ""
        self._say(f"oracle repro: {s.target} diverged from the reference in {s.report_dir}{split}; searching the "
                  f"smallest request that still diverges (at most {self.max_probes} probes, a fresh server each)")
        self.result = search(s.target, context=s.context, max_tokens=s.max_tokens, probe=self._probe,
                             budget=self.max_probes, probes=self.probes)
        r = self.result
        if not r.reproduced:
            return self._finish(NOT_REPRODUCED, "not-reproduced",
                                f"not reproduced: {s.target} matched the reference in {len(r.probes)} fresh "
                                f"server(s) ({self._sent()}); the gate's divergence did not come back")
        self._write("searched")
        self._say(f"verify: the final request ({len(r.prompts)} prompt(s), max_tokens {r.max_tokens}) twice on a "
                  "fresh server ...")
        self.verified = self.replayer.verify(r.prompts, r.max_tokens, shown=self._shown)
        splits = [split_within(s.expected.completion_ids, ids, r.max_tokens) for ids in self.verified.observed]
        if any(x is None for x in splits):
            same = sum(x is not None for x in splits)
            return self._finish(NOT_REPRODUCED, "not-reproduced",
                                f"not reproduced: the final request diverged in the search but only {same} of "
                                f"{len(splits)} times in the verify; the divergence is not stable enough to report")
        return self._finish(WRITTEN, "reproduced", "reproduced")

    def _probe(self, prompts: tuple[str, ...], max_tokens: int) -> int | None:
        number = self.replayer.starts + 1  # the verify start comes after every probe
        self._start_line(f"probe {number}/{self.max_probes}: {len(prompts)} prompt(s), max_tokens {max_tokens} ... ")
        t0 = time.perf_counter()
        split = self.replayer.probe(prompts, max_tokens)
        self._end_line(f"{'diverged at token ' + str(split) if split is not None else 'exact'} "
                       f"{time.perf_counter() - t0:.1f} s")
        return split

    def _sent(self) -> str:
        s = self.source
        return f"the prompt alone{', and after the ' + str(len(s.context)) + ' sent before it' if s.context else ''}"

    def _shown(self, observed: list[int]) -> list[int]:
        """The ids whose text the report shows: both sides around the split."""
        rows = around_split(self.source.expected.completion_ids, observed, self.result.split or 0,
                            self.result.max_tokens)
        return [t for row in rows for t in (row["expected_id"], row["observed_id"]) if t is not None]

    def _write(self, status: str, code: int | None = None, answer: str = "") -> None:
        result = self.result or SearchResult(False, (), self.source.max_tokens, None, False, self.probes)
        write_repro(self.out, self.source, result, self.verified, status=status, exit_code=code,
                    answer=answer, server_starts=self.replayer.starts,
                    wall_s=time.perf_counter() - self.started)

    def _finish(self, code: int, status: str, answer: str) -> int:
        self._write(status, code, answer)
        if code == WRITTEN:
            r = self.result
            budget = "" if r.proven else "; the probe budget ran out first, so a smaller one may exist"
            self._say(f"oracle repro: {self.source.target} diverges at token {r.split} with "
                      f"{len(r.prompts)} of {len(self.source.order)} prompt(s) and max_tokens {r.max_tokens} "
                      f"(reproduced twice by the request in repro.md{budget})")
        else:
            self._say(f"oracle repro: {answer}")
        self._say(f"report: {self.out / 'repro.md'} (and repro.json)")
        return code

    def _stop(self, why: str) -> int:
        self._end_line("stopped")
        first = why.splitlines()[0]
        return self._finish(STOPPED, "interrupted", f"interrupted: {first[:300]}")

