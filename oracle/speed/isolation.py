"""Was the server alone on its device during the timed run? Another engine on the GPU, or a busy process on the
CPU the server computes on, slows the run by a share no interval over prompts can see (the field notes: "n=3 plus
a respawned extra engine is not a headline").

    server = ServerProcesses(url, in_process=False, oracle=oracle_processes())   # found by its port
    cpu = CpuWindow(exclude=oracle); cpu.start(); ...server.follow() each tick...; others = cpu.stop(server.pids)
    gpu_others(processes, server=server)           # other compute processes on the server's GPU(s)
    block = isolation_block(device="cpu", others=others, method=..., window_s=...)   # speed.isolation

On the CPU a process is "another process" when it used at least CPU_SHARE of one core over the window (and at
least CPU_MIN_S seconds): the server's own process group and oracle (its process and the processes that started
it) are left out. On a GPU every other compute process on the server's GPU counts, whatever it does.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

from oracle.redaction import redact_command

__all__ = ["CPU_MIN_S", "CPU_SHARE", "ISOLATED", "NOT_CHECKED", "NOT_ISOLATED", "CpuWindow", "Proc", "gpu_others",
           "ServerProcesses", "host_crowded", "isolation_block", "listening_pid", "merge_isolation", "name_processes",
           "oracle_processes", "proc_table", "server_processes", "xpu_smi_processes"]

ISOLATED, NOT_ISOLATED, NOT_CHECKED = "isolated", "not isolated", "not checked"
# A busy loop beside the server on a 2-core host gets ~0.3 to 1 core; background daemons of a quiet CI host stay
# under a few percent of one. A tenth of a core over the window tells the two apart with margin on both sides.
CPU_SHARE = 0.10
CPU_MIN_S = 0.1  # and at least this much CPU time: a short window's clock-tick rounding is no process
PROC = Path("/proc")
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0", "[::1]"}


class Proc(NamedTuple):
    pid: int
    name: str
    ppid: int
    pgid: int
    ticks: int  # user + system CPU time, in clock ticks
    start: int  # start time since boot, in ticks: a pid reused in the window is another process


def _stat(path: Path) -> Proc | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    head, _, tail = text.rpartition(")")
    fields = tail.split()
    try:
        return Proc(int(path.parent.name), head.partition("(")[2], int(fields[1]), int(fields[2]),
                    int(fields[11]) + int(fields[12]), int(fields[19]))
    except (IndexError, ValueError):
        return None


def proc_table(proc: Path = PROC) -> dict[int, Proc]:
    """Every process's /proc/PID/stat, read now."""
    out = {}
    for stat in proc.glob("[0-9]*/stat"):
        p = _stat(stat)
        if p is not None:
            out[p.pid] = p
    return out


def oracle_processes(table: dict[int, Proc] | None = None, pid: int | None = None) -> set[int]:
    """oracle's own process and the chain that started it (pytest's controller, a shell, the CI runner)."""
    table = proc_table() if table is None else table
    pid = os.getpid() if pid is None else pid
    out = set()
    while pid > 0 and pid not in out:
        out.add(pid)
        pid = table[pid].ppid if pid in table else 0
    return out


def _descendants(table: dict[int, Proc], roots: set[int]) -> set[int]:
    out, grew = set(roots), True
    while grew:
        more = {p.pid for p in table.values() if p.ppid in out} - out
        out |= more
        grew = bool(more)
    return out


def _tcp(proc: Path) -> list[list[str]]:
    rows = []
    for name in ("tcp", "tcp6"):
        try:
            rows += [line.split() for line in (proc / "net" / name).read_text().splitlines()[1:]]
        except OSError:
            continue
    return [f for f in rows if len(f) > 9]


def _port(address: str) -> int:
    return int(address.rsplit(":", 1)[1], 16)


def _links(fd_dir: Path) -> set[str]:
    """What a process's file descriptors point at; an fd closed while they are read is skipped, not the rest."""
    try:
        fds = list(fd_dir.iterdir())
    except OSError:
        return set()
    out = set()
    for fd in fds:
        try:
            out.add(os.readlink(fd))
        except OSError:
            continue
    return out


def _socket_pid(inodes: set[str], proc: Path) -> int | None:
    for fd_dir in proc.glob("[0-9]*/fd"):
        if _links(fd_dir) & inodes:
            return int(fd_dir.parent.name)
    return None


def listening_pid(port: int, proc: Path = PROC) -> int | None:
    """The pid holding the socket that listens on this TCP port on this host (from /proc/net/tcp and tcp6)."""
    inodes = {f"socket:[{f[9]}]" for f in _tcp(proc) if f[3] == "0A" and _port(f[1]) == port}
    return _socket_pid(inodes, proc) if inodes else None


class ServerProcesses:
    """The server's pids on this host: the process listening on the URL's port, its process group and descendants,
    and, followed while the run goes (`follow()`), the servers it forwards to on this host (a reverse proxy's
    upstream: the local ports its processes hold connections to). A listener inside oracle (a proxy thread) is no
    server itself: only what it forwards to is."""

    def __init__(self, url: str | None, *, in_process: bool, oracle: set[int], proc: Path = PROC) -> None:
        self.proc, self.oracle = proc, oracle
        self.pids: set[int] = set()
        self.watch: set[int] = set()  # whose connections follow() reads: the listener and the server's pids
        self.ports: dict[int, str] = {}  # upstream ports followed, and what holds them
        if in_process:
            self.pids, self.found, self.local = {os.getpid()}, "in process: the server is oracle's own process", True
            return
        parts = urlsplit(url or "")
        host = (parts.hostname or "").lower()
        self.local = host in _LOCAL_HOSTS
        if not self.local:
            try:
                self.local = socket.gethostbyname(host) in ("127.0.0.1", socket.gethostbyname(socket.gethostname()))
            except OSError:
                self.local = False
        if not self.local:
            self.found = f"the server ({host or url}) is not on this host"
            return
        port = parts.port or (443 if parts.scheme == "https" else 80)
        pid = listening_pid(port, proc)
        if pid is None:
            self.found = f"no process of this host that oracle can see listens on port {port}"
            return
        if pid in oracle:
            self.found = f"port {port} is oracle's own (a proxy inside it)"
            self.watch = {pid}
        else:
            self._add(pid)
            self.found = f"pid {pid} listens on port {port}; its process group {self._pgid(pid)}"
            self.watch = set(self.pids)

    def _pgid(self, pid: int) -> int:
        p = _stat(self.proc / str(pid) / "stat")
        return p.pgid if p is not None else pid

    def _add(self, pid: int) -> None:
        table = proc_table(self.proc)
        pgid = table[pid].pgid if pid in table else pid
        group = {p.pid for p in table.values() if p.pgid == pgid} | {pid}
        self.pids |= _descendants(table, group) - self.oracle

    def follow(self) -> None:
        """Add the local servers the watched processes hold connections to (their upstream), once per port."""
        if not self.watch:
            return
        inodes = set()
        for pid in self.watch | self.pids:
            inodes |= _links(self.proc / str(pid) / "fd")
        rows = _tcp(self.proc)
        listening = {_port(f[1]) for f in rows if f[3] == "0A"}
        for f in rows:
            if f[3] != "01" or f"socket:[{f[9]}]" not in inodes:
                continue
            port = _port(f[2])
            if port in listening and port not in self.ports and _port(f[1]) not in listening:
                pid = listening_pid(port, self.proc)
                self.ports[port] = "oracle's own, or already the server's"  # looked up once
                if pid is not None and pid not in self.oracle and pid not in self.pids:
                    self._add(pid)
                    self.ports[port] = f"pid {pid} listens on port {port}, which the server's processes forward to"
                    self.found += f"; {self.ports[port]}"


def server_processes(url: str | None, *, in_process: bool = False, proc: Path = PROC) -> tuple[set[int], str]:
    """The server's pids and how they were found, as the window starts (`ServerProcesses`, no upstream followed)."""
    found = ServerProcesses(url, in_process=in_process, oracle=set(), proc=proc)
    return found.pids, found.found


def _cmdline(pid: int, proc: Path, fallback: str) -> str:
    try:
        argv = (proc / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return fallback
    text = " ".join(a.decode(errors="replace") for a in argv if a)
    return redact_command(text[:160]) if text else fallback


class CpuWindow:
    """CPU time of every process between start() and stop(); stop() lists those that used at least CPU_SHARE of a
    core (and CPU_MIN_S seconds) and are not excluded."""

    def __init__(self, *, exclude: set[int], proc: Path = PROC, clock=None) -> None:
        import time
        self.exclude, self.proc, self.clock = set(exclude), proc, clock or time.monotonic
        self.hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.before: dict[int, Proc] = {}
        self.after: dict[int, Proc] = {}
        self.t0 = 0.0
        self.window_s = 0.0

    def start(self) -> None:
        self.before = proc_table(self.proc)
        self.t0 = self.clock()

    def stop(self, exclude: set[int] = frozenset()) -> list[dict]:
        """The other processes; exclude: more pids to leave out (the server's, as found by the end)."""
        self.after = after = proc_table(self.proc)
        exclude = self.exclude | set(exclude)
        self.window_s = max(self.clock() - self.t0, 1e-9)
        others = []
        for pid, p in after.items():
            if pid in exclude:
                continue
            old = self.before.get(pid)
            used = p.ticks - (old.ticks if old is not None and old.start == p.start else 0)
            cpu_s = used / self.hz
            share = cpu_s / self.window_s
            if share >= CPU_SHARE and cpu_s >= CPU_MIN_S:
                others.append({"pid": pid, "name": p.name, "command": _cmdline(pid, self.proc, p.name),
                               "cpu_s": round(cpu_s, 2), "cpu_share": round(share, 3), "source": "/proc"})
        return sorted(others, key=lambda o: -o["cpu_share"])


def gpu_others(processes: list[dict], *, server: set[int], oracle: set[int]) -> tuple[list[dict], str]:
    """The compute processes on the server's GPU(s) that are neither the server nor oracle, and which GPUs those
    were (all of them, said so, when the server's pids are on none: another pid namespace, or a CPU run)."""
    mine = {p.get("pci") or p.get("gpu") for p in processes if p["pid"] in server}
    if mine:
        scope = f"the server's GPU(s) {', '.join(sorted(map(str, mine)))}"
        on = [p for p in processes if (p.get("pci") or p.get("gpu")) in mine]
    else:
        scope = "every GPU (the server's processes hold none: another pid namespace, or a CPU run)"
        on = processes
    return [p for p in on if p["pid"] not in server and p["pid"] not in oracle], scope


def name_processes(others: list[dict], proc: Path = PROC) -> list[dict]:
    """Give each process without a name its /proc comm and command line (a pid of another namespace keeps none)."""
    for o in others:
        if not o.get("name"):
            try:
                o["name"] = (proc / str(o["pid"]) / "comm").read_text().strip()
                o["command"] = _cmdline(o["pid"], proc, o["name"])
            except OSError:
                o["name"] = f"pid {o['pid']} (not visible from here)"
    return others


def xpu_smi_processes(text: str) -> list[dict]:
    """`xpu-smi ps`: its table's rows (PID, Command, DeviceID, ...) as process dicts."""
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].isdigit() and f[2].isdigit():
            out.append({"pid": int(f[0]), "name": f[1], "gpu": int(f[2]), "source": "xpu-smi ps"})
    return out


def host_crowded(host: dict | None) -> bool:
    """The host's own accounting saw at least CPU_SHARE of a core (and CPU_MIN_S) outside the server and oracle."""
    return bool(host) and host["outside_share"] >= CPU_SHARE and host["outside_cpu_s"] >= CPU_MIN_S


def isolation_block(*, device: str, method: str, others: list[dict] | None, window_s: float | None,
                    excluded: dict, reason: str = "", host: dict | None = None, host_words=None,
                    name: str | None = None) -> dict:
    """speed.isolation: the verdict, the other processes (named), the host's own accounting (`host.py`: CPU time
    outside the server and oracle, short-lived processes), how they were found, what was left out. `name`: the
    device's model ('NVIDIA H100 80GB HBM3'), named in the words in place of its kind."""
    window = None if window_s is None else round(window_s, 3)
    if others is None:  # the window is stated here too: what went unchecked, and over how long
        return {"verdict": NOT_CHECKED, "device": device, "method": method, "reason": reason, "others": [],
                "window_s": window, "excluded": excluded}
    crowded = host_crowded(host)
    block = {"verdict": NOT_ISOLATED if others or crowded else ISOLATED, "device": device, "device_name": name or device,
             "method": method,
             "others": others, "window_s": window, "excluded": excluded}
    if host is not None:
        block["host"] = host
    if device == "cpu":
        block["cpu_share"], block["cpu_min_s"] = CPU_SHARE, CPU_MIN_S
    parts = []
    if crowded and host_words is not None:
        parts.append(host_words(host))
    if others:
        names = ", ".join(f"{o['name']} (pid {o['pid']}"
                          + (f", {o['cpu_share']:.0%} of a core" if "cpu_share" in o else "")
                          + (f", {o['gpu_memory_mib']:g} MiB" if o.get("gpu_memory_mib") is not None else "")
                          + (f", {o['sm_util_max']:g}% SM" if o.get("sm_util_max") is not None else "") + ")"
                          for o in others[:5])
        more = f" and {len(others) - 5} more" if len(others) > 5 else ""
        parts.append(f"another process ran on the {name or device} during the timed run: {names}{more}")
    if parts:
        block["reason"] = "not isolated: " + "; ".join(parts)
    return block


def merge_isolation(blocks: list[dict | None]) -> dict | None:
    """Several servers' blocks as one: not isolated when any is (its reason first), each block kept."""
    blocks = [b for b in blocks if b]
    if len(blocks) <= 1:
        return blocks[0] if blocks else None
    worst = next((b for b in blocks if b["verdict"] == NOT_ISOLATED), blocks[0])
    return dict(worst, others=[o for b in blocks for o in b.get("others") or []], servers=blocks)
