"""What stopped a run that pytest ends as interrupted, in words for the partial report and the terminal: a signal
(SIGINT from Ctrl-C, SIGTERM from kill, a job scheduler or a container stop) or an internal stop (pytest.exit, or a
session stop another plugin asked for). SIGTERM is turned into an interruption like Ctrl-C's, so that a terminated
run still keeps its records, stops its server and writes its partial report.

    restore = catch_sigterm()            # in the main thread, for the run's length; restore() at the end
    stop_cause(excinfo.value)            # "stopped by SIGTERM (...)"
"""

from __future__ import annotations

import signal
import threading
from typing import Callable

import pytest

__all__ = ["SignalStop", "catch_sigterm", "stop_cause"]


class SignalStop(KeyboardInterrupt):
    """A signal other than SIGINT, raised in the main thread so that the run stops as after Ctrl-C."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")


def catch_sigterm() -> Callable[[], None]:
    """SIGTERM raises SignalStop from now on (main thread only: elsewhere nothing changes); returns the restore."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    before = signal.getsignal(signal.SIGTERM)

    def stop(signum, frame):
        raise SignalStop(signum)

    signal.signal(signal.SIGTERM, stop)
    return lambda: signal.signal(signal.SIGTERM, before if before is not None else signal.SIG_DFL)


def stop_cause(exc: BaseException) -> str:
    """The cause of an interruption in words, naming what sent it."""
    if isinstance(exc, SignalStop):
        name = signal.Signals(exc.signum).name
        return f"stopped by {name} (a signal sent to oracle's process: kill, a job scheduler or a container stop)"
    if isinstance(exc, pytest.exit.Exception):
        return f"stopped by pytest.exit: {exc.msg} (an internal stop, asked for by a plugin or a test)"
    if isinstance(exc, pytest.Session.Interrupted):
        return f"stopped: {exc} (an internal stop, asked for by pytest or a plugin)"
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    return f"stopped by {type(exc).__name__}: {exc}"
