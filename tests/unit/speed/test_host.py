"""The host's own accounting over a window, against a fake /proc tree: /proc/stat's busy time less the server's and
oracle's CPU time, forks that lived and died inside the window, CPU pressure; and the isolation verdict and words
it gives (a storm of short processes that no per-process reading can see)."""

from __future__ import annotations

import os
from pathlib import Path

from oracle.speed.host import HostWindow, host_words, read_pressure, read_stat
from oracle.speed.isolation import CPU_SHARE, ISOLATED, NOT_ISOLATED, isolation_block
from oracle.speed.report import power_lines

HZ = os.sysconf("SC_CLK_TCK")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def write_task(proc: Path, pid: int, *, ticks: int, start: int, tid: int | None = None) -> None:
    fields = ["S", 1, pid, pid, 0, -1, 0, 0, 0, 0, 0, ticks, 0, 0, 0, 20, 0, 1, 0, start, 0]
    line = f"{pid} (p{pid}) " + " ".join(map(str, fields)) + "\n"
    (proc / str(pid)).mkdir(parents=True, exist_ok=True)
    (proc / str(pid) / "stat").write_text(line)
    (proc / str(pid) / "task" / str(tid or pid)).mkdir(parents=True, exist_ok=True)
    (proc / str(pid) / "task" / str(tid or pid) / "stat").write_text(line)


def write_host(proc: Path, *, user: int, system: int, forks: int, uptime_s: float, pressure_us: int | None) -> None:
    (proc / "stat").write_text(f"cpu  {user} 0 {system} 999999 50 7 9 300 0 0\ncpu0 1 2 3 4\nprocesses {forks}\n")
    (proc / "uptime").write_text(f"{uptime_s} 100.0\n")
    if pressure_us is not None:
        (proc / "pressure").mkdir(exist_ok=True)
        (proc / "pressure" / "cpu").write_text(f"some avg10=1.00 avg60=0.50 avg300=0.10 total={pressure_us}\n"
                                               "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")


def test_a_storm_of_short_processes_is_seen_by_the_hosts_totals(tmp_path):
    """Ten seconds: the server used 12 CPU s and oracle 1 s; the host counted 17 s busy (user + nice + system;
    interrupts and steal are no process's): 4 s ran outside them, in 30 forks of which 1 is still alive (a thread the
    server started): 29 short-lived processes, each gone before the window's end read them."""
    proc = tmp_path
    write_host(proc, user=1000, system=500, forks=5000, uptime_s=100.0, pressure_us=2_000_000)
    write_task(proc, 10, ticks=0, start=50)  # the server
    write_task(proc, 20, ticks=0, start=40)  # oracle
    clock = Clock()
    window = HostWindow(proc=proc, clock=clock)
    window.start()
    clock.now = 10.0
    write_host(proc, user=1000 + 14 * HZ, system=500 + 3 * HZ, forks=5030, uptime_s=110.0, pressure_us=5_000_000)
    write_task(proc, 10, ticks=12 * HZ, start=50)
    write_task(proc, 10, ticks=12 * HZ, start=50, tid=11)
    (proc / "10" / "task" / "11" / "stat").write_text((proc / "10" / "task" / "11" / "stat").read_text().replace(
        " 50 0\n", f" {int(105 * HZ)} 0\n"))  # a thread started in the window, alive at its end
    write_task(proc, 20, ticks=1 * HZ, start=40)
    host = window.stop(own={10, 20})
    assert (host["busy_cpu_s"], host["own_cpu_s"], host["outside_cpu_s"]) == (17.0, 13.0, 4.0)
    assert host["outside_share"] == 0.4 and host["forks"] == 30 and host["short_lived"] == 29
    assert host["pressure_some_s"] == 3.0 and host["pressure_some_share"] == 0.3
    assert host_words(host) == ("29 short-lived processes, 4 CPU s outside the server and oracle over the window "
                                "(40% of a core over 10 s); tasks waited for a CPU 30% of the window "
                                "(/proc/pressure/cpu)")
    block = isolation_block(device="cpu", method="m", others=[], window_s=10.0, excluded={}, host=host,
                            host_words=host_words)
    assert block["verdict"] == NOT_ISOLATED and block["host"] == host
    assert block["reason"] == "not isolated: " + host_words(host)
    named = isolation_block(device="cpu", method="m", window_s=10.0, excluded={}, host=host, host_words=host_words,
                            others=[{"pid": 30, "name": "yes", "cpu_share": 0.2}])
    assert named["reason"] == ("not isolated: " + host_words(host) + "; another process ran on the cpu during the "
                               "timed run: yes (pid 30, 20% of a core)")
    assert power_lines({"isolation": named}) == [f"isolation: {named['reason']} (m)"]


def test_a_quiet_host_stays_isolated_and_a_host_without_proc_stat_is_not_judged_by_it(tmp_path):
    proc = tmp_path
    write_host(proc, user=0, system=0, forks=10, uptime_s=50.0, pressure_us=None)
    write_task(proc, 10, ticks=0, start=1)
    clock = Clock()
    window = HostWindow(proc=proc, clock=clock)
    window.start()
    clock.now = 20.0
    busy = int(0.5 * HZ)  # half a second of kernel threads and daemons in 20 s: 2.5% of a core
    write_host(proc, user=10 * HZ + busy, system=0, forks=12, uptime_s=70.0, pressure_us=None)
    write_task(proc, 10, ticks=10 * HZ, start=1)
    host = window.stop(own={10})
    assert host["outside_share"] == 0.025 < CPU_SHARE and "pressure_some_s" not in host and host["short_lived"] == 2
    block = isolation_block(device="cpu", method="m", others=[], window_s=20.0, excluded={}, host=host,
                            host_words=host_words)
    assert block["verdict"] == ISOLATED and "reason" not in block
    empty = tmp_path / "none"
    empty.mkdir()
    assert read_stat(empty) is None and read_pressure(empty) is None
    blind = HostWindow(proc=empty, clock=clock)
    blind.start()
    assert blind.stop(own=set()) is None
