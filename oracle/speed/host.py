"""The host's own accounting over a timed window: every CPU second the kernel counted (/proc/stat) less the CPU time
of the server's and oracle's processes, how many processes were started (the kernel's fork counter) and how long
runnable tasks waited for a CPU (/proc/pressure/cpu, where the kernel keeps it).

    host = HostWindow(); host.start(own=server | oracle)
    ...the timed run...
    block = host.stop(own=server | oracle)      # {"outside_cpu_s", "outside_share", "short_lived", ...}

Why. Reading each process's CPU time at the window's start and end (`isolation.CpuWindow`) cannot see a process that
was born and died inside it: a job starting many short processes (1 to 3 s each, most of a core each) beside a
record run left the card `isolated` while the server decoded at 6.7 tok/s, a third of its quiet rate. The kernel's
totals see them: the busy time of the whole host (user + nice + system; interrupts, steal and I/O wait are not a
process's) minus the time of the processes oracle knows to be its own and the server's is what ran beside the
server, whoever ran it. Forks over the window less the tasks still alive at its end that started in it are the
processes (and threads) that lived and died inside it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from oracle.speed.isolation import PROC, Proc, proc_table

__all__ = ["HostWindow", "host_words", "read_pressure", "read_stat"]


def read_stat(proc: Path = PROC) -> tuple[int, int] | None:
    """(busy ticks of all CPUs: user + nice + system, processes forked since boot), or None when unreadable."""
    try:
        lines = (proc / "stat").read_text().splitlines()
    except OSError:
        return None
    busy = forks = None
    for line in lines:
        f = line.split()
        if f and f[0] == "cpu" and len(f) >= 4:
            busy = int(f[1]) + int(f[2]) + int(f[3])
        elif f and f[0] == "processes" and len(f) > 1:
            forks = int(f[1])
    return None if busy is None or forks is None else (busy, forks)


def read_pressure(proc: Path = PROC) -> float | None:
    """/proc/pressure/cpu's `some` total in seconds (time at least one runnable task waited), None where absent."""
    try:
        for line in (proc / "pressure" / "cpu").read_text().splitlines():
            if line.startswith("some "):
                fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
                return int(fields["total"]) / 1e6
    except (OSError, KeyError, ValueError):
        return None
    return None


def _uptime_ticks(proc: Path, hz: int) -> int | None:
    try:
        return int(float((proc / "uptime").read_text().split()[0]) * hz)
    except (OSError, ValueError, IndexError):
        return None


def _tasks_started_since(proc: Path, since_ticks: int) -> int:
    """Tasks (processes and their threads) alive now that started at or after `since_ticks` since boot."""
    n = 0
    for stat in proc.glob("[0-9]*/task/[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
            n += int(fields[19]) >= since_ticks
        except (OSError, IndexError, ValueError):
            continue
    return n


def _own_ticks(before: dict[int, Proc], after: dict[int, Proc], own: set[int]) -> int:
    """CPU ticks the own processes used in the window (one started inside it counts from zero)."""
    used = 0
    for pid in own:
        p = after.get(pid)
        if p is None:
            continue
        old = before.get(pid)
        used += p.ticks - (old.ticks if old is not None and old.start == p.start else 0)
    return used


class HostWindow:
    """/proc/stat, the fork counter and CPU pressure between start() and stop()."""

    def __init__(self, proc: Path = PROC, clock=None) -> None:
        self.proc, self.clock = proc, clock or time.monotonic
        self.hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.stat0: tuple[int, int] | None = None
        self.pressure0: float | None = None
        self.uptime0: int | None = None
        self.before: dict[int, Proc] = {}
        self.t0 = 0.0

    def start(self, table: dict[int, Proc] | None = None) -> None:
        self.before = proc_table(self.proc) if table is None else table
        self.stat0, self.pressure0 = read_stat(self.proc), read_pressure(self.proc)
        self.uptime0 = _uptime_ticks(self.proc, self.hz)
        self.t0 = self.clock()

    def stop(self, own: set[int], table: dict[int, Proc] | None = None) -> dict | None:
        """The window's host block; None when /proc/stat was not readable (then only per-process times count)."""
        stat1, pressure1 = read_stat(self.proc), read_pressure(self.proc)
        window_s = max(self.clock() - self.t0, 1e-9)
        after = proc_table(self.proc) if table is None else table
        if self.stat0 is None or stat1 is None:
            return None
        busy = stat1[0] - self.stat0[0]
        mine = _own_ticks(self.before, after, own)
        forks = stat1[1] - self.stat0[1]
        alive = _tasks_started_since(self.proc, self.uptime0) if self.uptime0 is not None else 0
        outside = max(busy - mine, 0) / self.hz
        block = {"window_s": round(window_s, 3), "busy_cpu_s": round(busy / self.hz, 2),
                 "own_cpu_s": round(mine / self.hz, 2), "outside_cpu_s": round(outside, 2),
                 "outside_share": round(outside / window_s, 3), "forks": forks,
                 "short_lived": max(forks - alive, 0), "cpus": os.cpu_count(),
                 "method": "/proc/stat busy time (user + nice + system) less the server's and oracle's processes' "
                           "CPU time; the fork counter less the tasks alive at the end that started in the window"}
        if self.pressure0 is not None and pressure1 is not None:
            block["pressure_some_s"] = round(pressure1 - self.pressure0, 3)
            block["pressure_some_share"] = round((pressure1 - self.pressure0) / window_s, 3)
        return block


def host_words(host: dict) -> str:
    """'12 short-lived processes, 3.4 CPU s outside the server and oracle over the window (57% of a core)'."""
    words = (f"{host['short_lived']} short-lived processes, {host['outside_cpu_s']:g} CPU s outside the server and "
             f"oracle over the window ({host['outside_share']:.0%} of a core over {host['window_s']:g} s)")
    if host.get("pressure_some_s") is not None:
        words += f"; tasks waited for a CPU {host['pressure_some_share']:.0%} of the window (/proc/pressure/cpu)"
    return words
