"""A server oracle launches from a shell command, health-checks, restarts and stops.

    server = LaunchedServer("llama-server -m m.gguf --port {port}", log_dir=Path("reports/x"))
    server.start(); ...; server.restart(); ...; server.stop()
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable

from oracle.backends import make_backend
from oracle.redaction import public_text, redact_command, scrub_file
from oracle.targets.base import TargetError, connect

__all__ = ["LaunchError", "LaunchedServer", "LaunchedTarget", "free_port"]

_RUNNING: set["LaunchedServer"] = set()


@atexit.register
def _stop_all() -> None:
    for server in list(_RUNNING):
        server.stop(grace_s=5)


def _die_with_parent() -> None:
    """In the child: get SIGTERM when oracle's process dies, so no server outlives a killed run."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    os.setsid()


class LaunchError(RuntimeError):
    """The launched server did not become healthy; the message carries the end of its log."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LaunchedServer:
    """A server process started from a shell command with `{port}` (and `{worker}`) filled in."""

    def __init__(self, command: str, *, log_dir: Path, env: dict[str, str] | None = None,
                 health_timeout_s: float = 600.0, worker: str = "0") -> None:
        self.command_template = command
        self.log_dir = log_dir
        self.env = env
        self.health_timeout_s = health_timeout_s
        self.worker = worker
        self.boot = 0
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self.log_path: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def configured_command(self) -> str:
        """The command with {worker} filled and {port} left as written: what configures the server."""
        return self.command_template.replace("{worker}", self.worker)

    @property
    def command(self) -> str:
        return self.configured_command.replace("{port}", str(self.port))

    def start(self, healthy: Callable[[str], bool]) -> None:
        self.boot += 1
        self.port = free_port()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.log_dir / f"server-boot{self.boot}.log"
        log = open(self.log_path, "wb")
        env = dict(os.environ, **(self.env or {}))
        self.process = subprocess.Popen(self.command, shell=True, stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=env, preexec_fn=_die_with_parent)
        _RUNNING.add(self)
        log.close()
        deadline = time.monotonic() + self.health_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LaunchError(f"the server exited with code {self.process.returncode} before it was healthy; "
                                  f"command: {redact_command(self.command)}\n{self.log_tail()}")
            if healthy(self.url):
                return
            time.sleep(0.25)
        self.stop()
        raise LaunchError(f"the server was not healthy within {self.health_timeout_s:.0f} s; "
                          f"command: {redact_command(self.command)}\n{self.log_tail()}")

    def log_tail(self, lines: int = 15) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        tail = public_text(self.log_path.read_text(errors="replace")).splitlines()[-lines:]
        return f"last lines of {self.log_path}:\n" + "\n".join("  " + t for t in tail)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, grace_s: float = 15.0) -> None:
        """Stop the server (if it still runs) and scrub its log: it may echo a key it was given."""
        try:
            self._end_process(grace_s)
        finally:
            if self.log_path is not None:
                scrub_file(self.log_path)

    def _end_process(self, grace_s: float) -> None:
        p, self.process = self.process, None
        _RUNNING.discard(self)
        if p is None or p.poll() is not None:
            return
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            p.wait(grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(5)

    def restart(self, healthy: Callable[[str], bool]) -> None:
        self.stop()
        self.start(healthy)


class LaunchedTarget:
    """A server oracle starts from a command (`--launch`, or an embedded default's), health-checks and restarts."""

    restartable = True

    def __init__(self, backend_name: str, command: str, *, kind: str, log_dir: Path, env: dict[str, str] | None,
                 worker: int, timeout_s: float | None, model_path: Path | None = None) -> None:
        self.kind, self.backend_name, self.timeout_s, self.model_path = kind, backend_name, timeout_s, model_path
        self.server = LaunchedServer(command, log_dir=log_dir, env=env, worker=str(worker))
        self.notes: list[str] = []
        self._health: dict[str, object] = {}

    @property
    def configured_command(self) -> str:
        return self.server.configured_command

    def _healthy(self, url: str) -> bool:
        # One client per URL for the whole health poll (a restart gets a new port, so a new client).
        if url not in self._health:
            self._health[url] = make_backend(self.backend_name, url)
        return self._health[url].healthy()

    def up(self):
        try:
            self.server.start(self._healthy)
        except LaunchError as exc:
            raise TargetError(f"oracle could not start the target: {exc}") from None
        return connect(self.backend_name, self.server.url, timeout_s=self.timeout_s, notes=self.notes)

    def restart(self):
        try:
            self.server.restart(self._healthy)
        except LaunchError as exc:
            raise TargetError(f"the server did not come back after the restart: {exc}") from None
        return connect(self.backend_name, self.server.url, timeout_s=self.timeout_s, notes=[])

    def stop(self) -> None:
        self.server.stop()
