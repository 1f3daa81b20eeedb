"""Progress on long runs: one live line per condition (condition, records i/n, tokens/s, and once the run is
planned the whole run's progress and ETA).

On a terminal the line is rewritten as records finish; in a log (no terminal) one line is
written when a condition ends; under `-q` nothing. The session calls start / record / end.
"""

from __future__ import annotations

import time
from typing import Callable

__all__ = ["ConditionProgress", "QuietProgress"]


class QuietProgress:
    def start(self, condition: str, total: int) -> None:
        pass

    def record(self, tokens: int) -> None:
        pass

    def end(self) -> None:
        pass


class ConditionProgress(QuietProgress):
    def __init__(self, terminal) -> None:
        self.tr = terminal
        self.live = terminal.isatty()
        self.condition, self.total, self.done, self.tokens, self.t0 = "", 0, 0, 0, 0.0
        self.suffix: Callable[[], str] = lambda: ""  # the whole run's progress and ETA (run/eta.py), once planned

    def start(self, condition: str, total: int) -> None:
        self.condition, self.total, self.done, self.tokens = condition, total, 0, 0
        self.t0 = time.perf_counter()
        if self.live:
            self.tr.write("\n")
            self.tr.rewrite(self._line())

    def record(self, tokens: int) -> None:
        self.done += 1
        self.tokens += tokens
        if self.live:
            self.tr.rewrite(self._line(), erase=True)

    def end(self) -> None:
        if self.live:
            self.tr.rewrite(self._line(), erase=True)
            self.tr.write("\n")
        else:
            self.tr.write_line(self._line())

    def _line(self) -> str:
        elapsed = max(time.perf_counter() - self.t0, 1e-9)
        return (f"oracle {self.condition}: {self.done}/{self.total} records, {self.tokens} tokens, "
                f"{self.tokens / elapsed:.0f} tok/s{self.suffix()}")
