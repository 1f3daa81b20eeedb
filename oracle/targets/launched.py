"""A server oracle launches from a shell command, health-checks, restarts and stops.

    server = LaunchedServer("llama-server -m m.gguf --port {port}", log_dir=Path("reports/x"))
    server.start(); ...; server.restart(); ...; server.stop()
"""

from __future__ import annotations

import atexit
import ctypes
import os
import re
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


LOG_TAIL_LINES = 20  # lines of a server's log quoted when it did not come up
# What llama-server ("couldn't bind HTTP server socket"), Python servers such as vLLM ("[Errno 98] Address already
# in use") and others print when their port is taken.
PORT_IN_USE = re.compile(r"couldn't bind|address already in use|errno 98|eaddrinuse|failed to bind", re.I)


def group_command(command: str) -> str:
    """The command for /bin/sh, run so that a SIGTERM to the shell (oracle's stop, or the parent-death signal when
    oracle is killed) reaches everything the command started: the shell keeps waiting for the command, and on
    SIGTERM or SIGHUP signals its whole process group (which the command's own children share)."""
    return f"trap 'trap - TERM HUP; kill -TERM 0' TERM HUP\n{{ {command}\n}} &\nwait $!"


def group_alive(pgid: int) -> list[int]:
    """The pids of the live (not zombie) processes of a process group."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            alive.append(int(stat.parent.name))
    return alive


def _kill_group(pgid: int) -> None:
    """SIGKILL what is left of a process group (a child that ignored SIGTERM, or outlived its shell)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class LaunchError(RuntimeError):
    """The launched server did not become healthy; the message carries the end of its log."""


# The health check's pause: short at first (a small model is up in a few tenths of a second, and every boot waits
# for it), growing to a quarter second for servers that load for minutes.
HEALTH_POLL_FIRST_S, HEALTH_POLL_MAX_S = 0.02, 0.25


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
        self.ready_s: float | None = None  # the last boot's time from the command to a healthy server

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
        """Start the command and wait for its health check; LaunchError (the server stopped, its log's end
        quoted) when it exits first or stays unhealthy for health_timeout_s."""
        self.boot += 1
        self.port = free_port()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.log_dir / f"server-boot{self.boot}.log"
        log = open(self.log_path, "wb")
        env = dict(os.environ, **(self.env or {}))
        self.process = subprocess.Popen(["/bin/sh", "-c", group_command(self.command)], stdout=log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                        preexec_fn=_die_with_parent)
        _RUNNING.add(self)
        log.close()
        started = time.monotonic()
        deadline = started + self.health_timeout_s
        pause = HEALTH_POLL_FIRST_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.stop()  # whatever it started in its process group goes with it
                raise LaunchError(self._exited(code))
            if healthy(self.url):
                self.ready_s = time.monotonic() - started  # the run plan prices the boots of later items by it
                return
            time.sleep(pause)
            pause = min(pause * 1.5, HEALTH_POLL_MAX_S)
        tail = self.log_tail()  # what it said while it was meant to come up, before the stop adds its own lines
        self.stop()
        raise LaunchError(f"the server was not healthy within {self.health_timeout_s:g} s (--launch-timeout "
                          f"{self.health_timeout_s:g}) and was stopped; a server that loads slowly needs a longer "
                          f"--launch-timeout S, one that never answers GET /health needs its command fixed; "
                          f"command: {redact_command(self.command)}\n{tail}")

    def _exited(self, code: int | None) -> str:
        tail = self.log_tail()
        if PORT_IN_USE.search(tail):
            return (f"the server could not bind its port {self.port}: the port is in use by another process (the "
                    f"server exited with code {code} before it was healthy); put {{port}} in the command where the "
                    f"port goes, so that oracle picks a free one, or stop what holds the port; "
                    f"command: {redact_command(self.command)}\n{tail}")
        return (f"the server exited with code {code} before it was healthy; fix what its log says, or run the "
                f"command by hand to see it fail; command: {redact_command(self.command)}\n{tail}")

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        tail = public_text(self.log_path.read_text(errors="replace")).splitlines()[-lines:]
        return f"last {len(tail)} lines of {self.log_path}:\n" + "\n".join("  " + t for t in tail)

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
        """SIGTERM the server's whole process group (the shell and all it started), SIGKILL after grace_s.
        SIGCONT follows the SIGTERM: a stopped process (SIGSTOP, a job-control stop, a debugger's) holds a signal
        pending until it runs again, so a frozen server would otherwise wait out the whole grace for its SIGKILL."""
        p, self.process = self.process, None
        _RUNNING.discard(self)
        if p is None:
            return
        try:
            os.killpg(p.pid, signal.SIGTERM)
            os.killpg(p.pid, signal.SIGCONT)
        except ProcessLookupError:
            p.wait()
            return
        deadline = time.monotonic() + grace_s
        try:
            p.wait(grace_s)
        except subprocess.TimeoutExpired:
            pass
        while group_alive(p.pid) and time.monotonic() < deadline:  # the shell's children shut down after it
            time.sleep(0.05)
        _kill_group(p.pid)
        p.wait(5)

    def restart(self, healthy: Callable[[str], bool]) -> None:
        self.stop()
        self.start(healthy)


class LaunchedTarget:
    """A server oracle starts from a command (`--launch`, or an embedded default's), health-checks and restarts."""

    restartable = True

    def __init__(self, backend_name: str, command: str, *, kind: str, log_dir: Path, env: dict[str, str] | None,
                 worker: int, timeout_s: float | None, model_path: Path | None = None,
                 launch_timeout_s: float = 600.0) -> None:
        self.kind, self.backend_name, self.timeout_s, self.model_path = kind, backend_name, timeout_s, model_path
        self.server = LaunchedServer(command, log_dir=log_dir, env=env, worker=str(worker),
                                     health_timeout_s=launch_timeout_s)
        self.notes: list[str] = []
        self._health: dict[str, object] = {}

    @property
    def configured_command(self) -> str:
        return self.server.configured_command

    @property
    def log_path(self) -> Path | None:
        """The current boot's server log."""
        return self.server.log_path

    @property
    def boot_s(self) -> float | None:
        """How long the last boot took to a healthy server (the run plan's price of a boot)."""
        return self.server.ready_s

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
