"""A launched server's process group and what its log says when it does not come up (real processes, no server)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from oracle.targets.launched import PORT_IN_USE, LaunchedServer, LaunchError, group_alive


@pytest.mark.parametrize("line", [
    "0.00.004.076 E srv         start: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 44761",  # llama
    "OSError: [Errno 98] Address already in use",  # vLLM, uvicorn
    "error while attempting to bind on address ('127.0.0.1', 8000): address already in use",
])
def test_port_in_use_is_recognised_in_a_servers_log(line):
    assert PORT_IN_USE.search(line)


def test_a_port_in_a_normal_log_is_not_mistaken_for_a_bind_failure():
    assert not PORT_IN_USE.search("main: server is listening on http://127.0.0.1:8080 - starting the main loop")


def test_stop_takes_down_everything_the_command_started(tmp_path):
    # The shell runs two sleepers, one in the background: both are in the group, both go.
    server = LaunchedServer("sleep 300 & sleep 301", log_dir=tmp_path, health_timeout_s=60)
    server.start(lambda url: True)
    pgid = server.process.pid
    deadline = time.monotonic() + 10
    while len(group_alive(pgid)) < 3 and time.monotonic() < deadline:  # the shell, its subshell's sleepers
        time.sleep(0.05)
    assert len(group_alive(pgid)) >= 3
    server.stop(grace_s=5)
    assert group_alive(pgid) == [] and server.process is None


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_a_stopped_server_ends_at_its_sigterm_not_after_the_grace(tmp_path):
    # A stopped process group (SIGSTOP, as job control stops one; the chaos tests stop the server alone) holds the
    # SIGTERM pending until it runs again: stop continues it, so it ends on the SIGTERM at once instead of waiting
    # out the grace for its SIGKILL.
    # The stop comes once the server runs (as after a health check a real server answers): a SIGTERM that lands
    # within the first milliseconds, while the shell's background child still holds the shell's trap, is spent on
    # that trap, and the sleep it then becomes waits out the grace (a start-up race of this test alone: under load
    # it failed ~3 runs in 6 of the whole folder).
    server = LaunchedServer("exec sleep 300", log_dir=tmp_path, health_timeout_s=60)
    server.start(lambda url: True)
    pgid = server.process.pid
    deadline = time.monotonic() + 10
    while not any(_comm(pid) == "sleep" for pid in group_alive(pgid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(pgid, signal.SIGSTOP)
    started = time.monotonic()
    server.stop(grace_s=30)
    assert group_alive(pgid) == [] and time.monotonic() - started < 10


def test_a_server_that_stays_unhealthy_is_stopped_with_its_log(tmp_path):
    server = LaunchedServer("echo loading; sleep 300", log_dir=tmp_path, health_timeout_s=1)
    with pytest.raises(LaunchError, match=r"not healthy within 1 s \(--launch-timeout 1\) and was stopped; .*\n"
                                          rf"last 1 lines of {tmp_path}/server-boot1.log:\n  loading$"):
        server.start(lambda url: False)
    assert server.process is None and not server.alive()
