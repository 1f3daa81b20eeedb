"""One run of a long-running tool (`oracle bisect`, `oracle repro`, a `--sweep`): Ctrl-C, a server that does not
start and a failed request each stop it the same way, in the tool's own words, and what it started is stopped.

    code = run_stopping(self._run, stop=self._stop, cleanup=self.starts.stop,
                        words=StopWords(server="a server did not start"))

`stop(why)` writes the tool's partial report and returns its exit code for a run stopped midway (each tool keeps
its own: bisect and repro 2, the sweep its partial answer). Nothing is retried: a failed request stops the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from oracle.backends import RequestFailed
from oracle.run.runner import RunInterrupted
from oracle.targets import TargetError

__all__ = ["StopWords", "run_stopping"]


@dataclass(frozen=True)
class StopWords:
    """How the tool names each stop; `failures`: the request errors it stops on (never retried)."""

    interrupted: str = "interrupted by Ctrl-C"
    server: str = "a server did not start"  # followed by ": <the target's message>"
    request: str = "a request failed (never retried)"  # followed by ": <the request's message>"
    failures: tuple[type[Exception], ...] = (RunInterrupted, RequestFailed)


def run_stopping(run: Callable[[], int], *, stop: Callable[[str], int], words: StopWords,
                 cleanup: Callable[[], None] = lambda: None) -> int:
    """`run()`'s exit code; on Ctrl-C, a target that does not come up or one of `words.failures`, `stop(why)`'s.
    `cleanup` runs either way (the servers the tool started are stopped)."""
    try:
        return run()
    except KeyboardInterrupt:
        return stop(words.interrupted)
    except TargetError as exc:
        return stop(f"{words.server}: {exc}")
    except words.failures as exc:
        return stop(f"{words.request}: {exc}")
    finally:
        cleanup()
