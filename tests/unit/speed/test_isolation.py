"""Isolation from /proc: CPU time per process over a window against a fake /proc tree (a busy process named, the
server's process group and oracle left out, a reused pid counted as new), the server found by its listening port,
and the card and comparison a busy neighbour labels `not isolated` (never a headline, --min-speedup not judged)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from oracle.speed.card import merge_cards, speed_card
from oracle.speed.figures import BYTES_ARRIVAL, prompt_figures
from oracle.speed.isolation import (CPU_MIN_S, CPU_SHARE, ISOLATED, NOT_CHECKED, NOT_ISOLATED, CpuWindow,
                                    ServerProcesses, isolation_block, listening_pid, oracle_processes, proc_table, server_processes)
from oracle.speed.power import power_block
from oracle.speed.report import headline, markdown_lines, power_lines
from oracle.speed.versus import compare_cards

HZ = os.sysconf("SC_CLK_TCK")


def write_stat(proc: Path, pid: int, name: str, *, ppid: int, pgid: int, ticks: int, start: int = 100) -> None:
    d = proc / str(pid)
    d.mkdir(parents=True, exist_ok=True)
    fields = ["S", ppid, pgid, pgid, 0, -1, 0, 0, 0, 0, 0, ticks, 0, 0, 0, 20, 0, 1, 0, start, 0]
    (d / "stat").write_text(f"{pid} ({name}) " + " ".join(map(str, fields)) + "\n")
    (d / "cmdline").write_bytes(name.encode() + b"\0--flag\0")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_busy_process_is_named_and_the_server_and_oracle_are_left_out(tmp_path):
    proc = tmp_path
    write_stat(proc, 10, "llama-server", ppid=9, pgid=9, ticks=0)  # the server: its process group
    write_stat(proc, 11, "llama-worker", ppid=10, pgid=9, ticks=0)
    write_stat(proc, 20, "python", ppid=1, pgid=20, ticks=0)  # oracle
    write_stat(proc, 30, "python", ppid=20, pgid=30, ticks=0)  # a busy child of the test
    write_stat(proc, 40, "sshd", ppid=1, pgid=40, ticks=0)  # a quiet daemon
    write_stat(proc, 50, "cron", ppid=1, pgid=50, ticks=5, start=100)  # will exit; its pid reused by a busy one
    clock = Clock()
    window = CpuWindow(exclude={9, 10, 11, 20}, proc=proc, clock=clock)
    window.start()
    clock.now = 10.0  # ten seconds of run
    write_stat(proc, 10, "llama-server", ppid=9, pgid=9, ticks=20 * HZ)  # 2 cores busy: excluded
    write_stat(proc, 11, "llama-worker", ppid=10, pgid=9, ticks=5 * HZ)
    write_stat(proc, 20, "python", ppid=1, pgid=20, ticks=3 * HZ)
    write_stat(proc, 30, "python", ppid=20, pgid=30, ticks=7 * HZ)  # 0.7 of a core
    write_stat(proc, 40, "sshd", ppid=1, pgid=40, ticks=int(0.05 * HZ))  # 0.5% of a core: background
    write_stat(proc, 50, "yes", ppid=1, pgid=50, ticks=2 * HZ, start=900)  # a new process under an old pid
    others = window.stop()
    assert [(o["pid"], o["name"], o["cpu_share"]) for o in others] == [(30, "python", 0.7), (50, "yes", 0.2)]
    assert others[0]["command"] == "python --flag" and others[0]["source"] == "/proc"
    block = isolation_block(device="cpu", method="/proc", others=others, window_s=window.window_s,
                            excluded={"server": [10, 11]})
    assert block["verdict"] == NOT_ISOLATED and block["cpu_share"] == CPU_SHARE and block["cpu_min_s"] == CPU_MIN_S
    assert block["reason"] == ("not isolated: another process ran on the cpu during the timed run: python (pid 30, "
                               "70% of a core), yes (pid 50, 20% of a core)")


def test_a_short_window_needs_real_cpu_time_not_a_tick(tmp_path):
    write_stat(tmp_path, 30, "kworker", ppid=2, pgid=0, ticks=0)
    clock = Clock()
    window = CpuWindow(exclude=set(), proc=tmp_path, clock=clock)
    window.start()
    clock.now = 0.05
    write_stat(tmp_path, 30, "kworker", ppid=2, pgid=0, ticks=1)  # one tick in 50 ms: 20% by share, no process
    assert window.stop() == []


def test_oracle_is_its_process_and_the_chain_that_started_it(tmp_path):
    write_stat(tmp_path, 1, "init", ppid=0, pgid=1, ticks=0)
    write_stat(tmp_path, 5, "bash", ppid=1, pgid=5, ticks=0)
    write_stat(tmp_path, 6, "pytest", ppid=5, pgid=6, ticks=0)
    write_stat(tmp_path, 7, "python", ppid=6, pgid=6, ticks=0)  # a child: not oracle
    assert oracle_processes(proc_table(tmp_path), pid=6) == {1, 5, 6}
    me = oracle_processes()
    assert os.getpid() in me and os.getppid() in me


def test_the_server_is_found_by_its_listening_port(tmp_path):
    net = tmp_path / "net"
    net.mkdir()
    header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    (net / "tcp").write_text(header
                             + "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 4711\n"
                             + "   1: 0100007F:1F91 0100007F:9C40 01 00000000:00000000 00:00000000 00000000 0 0 4712\n")
    write_stat(tmp_path, 10, "sh", ppid=1, pgid=10, ticks=0)
    write_stat(tmp_path, 11, "llama-server", ppid=10, pgid=10, ticks=0)
    write_stat(tmp_path, 12, "helper", ppid=11, pgid=99, ticks=0)  # a child that left the group: still the server
    (tmp_path / "11" / "fd").mkdir()
    (tmp_path / "11" / "fd" / "3").symlink_to("socket:[4711]")
    assert listening_pid(8080, tmp_path) == 11
    assert listening_pid(8081, tmp_path) is None  # connected, not listening
    pids, found = server_processes("http://127.0.0.1:8080", proc=tmp_path)
    assert pids == {10, 11, 12} and found == "pid 11 listens on port 8080; its process group 10"
    assert server_processes("http://127.0.0.1:9", proc=tmp_path) == (
        set(), "no process of this host that oracle can see listens on port 9")
    assert server_processes("http://gpu-box.invalid:8000", proc=tmp_path) == (
        set(), "the server (gpu-box.invalid) is not on this host")
    assert server_processes(None, in_process=True) == ({os.getpid()}, "in process: the server is oracle's own process")


def test_a_proxy_is_followed_to_the_server_it_forwards_to(tmp_path):
    """oracle -> a proxy on port 8080 -> the server on port 9000: once the proxy holds a connection to 9000, the
    server's processes are the proxy's and the upstream's; a proxy inside oracle itself adds only the upstream."""
    net = tmp_path / "net"
    net.mkdir()
    header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    listen = ("   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 100\n"
              "   1: 0100007F:2328 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 200\n")
    (net / "tcp").write_text(header + listen)
    write_stat(tmp_path, 10, "nginx", ppid=1, pgid=10, ticks=0)
    write_stat(tmp_path, 20, "llama-server", ppid=1, pgid=20, ticks=0)
    for pid, links in ((10, {"3": "socket:[100]", "4": "socket:[150]"}), (20, {"3": "socket:[200]"})):
        (tmp_path / str(pid) / "fd").mkdir()
        for fd, target in links.items():
            (tmp_path / str(pid) / "fd" / fd).symlink_to(target)
    found = ServerProcesses("http://127.0.0.1:8080", in_process=False, oracle={1, 5}, proc=tmp_path)
    assert found.pids == {10} and found.found == "pid 10 listens on port 8080; its process group 10"
    found.follow()
    assert found.pids == {10}  # no request yet: no upstream connection
    (net / "tcp").write_text(header + listen  # nginx's connection to 127.0.0.1:9000 (inode 150)
                             + "   2: 0100007F:B000 0100007F:2328 01 00000000:00000000 00:00000000 00000000 0 0 150\n")
    found.follow()
    assert found.pids == {10, 20}
    assert found.found.endswith("; pid 20 listens on port 9000, which the server's processes forward to")
    inside = ServerProcesses("http://127.0.0.1:8080", in_process=False, oracle={1, 10}, proc=tmp_path)
    assert inside.pids == set() and inside.found == "port 8080 is oracle's own (a proxy inside it)"
    inside.follow()
    assert inside.pids == {20}


def rows(rate: float, n: int = 6) -> dict[str, dict]:
    return {f"p{i}": prompt_figures([0.05 + k / rate for k in range(120)]) for i in range(n)}


NEIGHBOUR = isolation_block(device="cpu", method="/proc/PID/stat CPU time over the window",
                            others=[{"pid": 30, "name": "python", "command": "python -c while 1: pass", "cpu_s": 7.0,
                                     "cpu_share": 0.7, "source": "/proc"}], window_s=10.0, excluded={})
ALONE = isolation_block(device="cpu", method="/proc/PID/stat CPU time over the window", others=[], window_s=10.0,
                        excluded={})
HW = {"accelerator": None, "cpu": "x", "cpu_count": 2, "model_sha256": "m"}


def test_a_busy_neighbour_makes_the_card_and_the_comparison_not_isolated():
    card = speed_card(rows(120), reasons=[], clock=BYTES_ARRIVAL, isolation=NEIGHBOUR)
    assert card["label"] == NOT_ISOLATED and card["reasons"][0] == NEIGHBOUR["reason"]
    assert card["isolation"] is NEIGHBOUR
    assert speed_card(rows(120), reasons=[], clock=BYTES_ARRIVAL, isolation=ALONE)["label"] == "headline"
    reference = speed_card(rows(100), reasons=[], clock=BYTES_ARRIVAL, isolation=ALONE)
    versus = compare_cards(card, reference, candidate_hw=HW, reference_hw=HW)
    assert versus["label"] == NOT_ISOLATED and versus["median"] == pytest.approx(1.2, abs=0.01)  # shown, not judged
    assert versus["reasons"][0] == f"candidate: {NEIGHBOUR['reason']}"
    card["vs_reference"] = versus
    assert headline(card).endswith("6 prompts, not isolated)")
    # the other side's neighbour counts the same; an isolated pair stays a headline
    assert compare_cards(reference, card, candidate_hw=HW, reference_hw=HW)["label"] == NOT_ISOLATED
    assert compare_cards(reference, reference, candidate_hw=HW, reference_hw=HW)["label"] == "headline"


def test_a_reference_recorded_not_isolated_makes_every_comparison_with_it_not_headline():
    reference = speed_card(rows(100), reasons=[], clock=BYTES_ARRIVAL, isolation=NEIGHBOUR)
    card = speed_card(rows(120), reasons=[], clock=BYTES_ARRIVAL, isolation=ALONE)
    versus = compare_cards(card, reference, candidate_hw=HW, reference_hw=HW)
    why = f"the reference was recorded not isolated ({NEIGHBOUR['reason'].removeprefix('not isolated: ')})"
    assert versus["label"] == NOT_ISOLATED and versus["not_headline"] == why
    assert versus["reasons"][0] == f"not headline: {why}"
    card["vs_reference"] = versus
    assert headline(card).endswith(f"6 prompts, not isolated; not headline: {why})")
    assert f"- not headline: {why}" in markdown_lines(card)


def test_a_merged_run_is_not_isolated_when_any_server_was_not():
    a = speed_card(rows(120, 3), reasons=[], clock=BYTES_ARRIVAL, isolation=ALONE)
    b = speed_card(rows(120, 3), reasons=[], clock=BYTES_ARRIVAL, isolation=NEIGHBOUR)
    merged = merge_cards([a, b], servers=2)
    assert merged["label"] == NOT_ISOLATED and merged["isolation"]["servers"] == [ALONE, NEIGHBOUR]


def test_energy_per_token_and_the_words():
    rapl = {"source": "rapl", "available": True, "joules": 120.0, "watts_mean": 12.0, "window_s": 10.0,
            "domains": {"intel-rapl:0 (package-0)": 120.0}, "wraps": 0}
    block = power_block("auto", "cpu", "RAPL: the run's accelerator is the CPU (no GPU in the identity)", [rapl], 300)
    assert block["joules"] == 120.0 and block["joules_per_token"] == 0.4 and block["watts_mean"] == 12.0
    card = speed_card(rows(120), reasons=[], clock=BYTES_ARRIVAL, isolation=ALONE, power=block)
    lines = power_lines(card)
    assert lines[0] == ("isolation: isolated (no other process on the cpu at >= 10% of a core over the run; "
                        "/proc/PID/stat CPU time over the window; the server's and oracle's own processes left out)")
    assert lines[1] == ("power: 120 J over 10 s (12 W mean), 0.4 J per generated token (prefill included); RAPL: the "
                        "run's accelerator is the CPU (no GPU in the identity)")
    none = power_block("auto", "cpu", "RAPL: ...", [{"source": "rapl", "available": False,
                                                     "reason": "not available: no /sys/class/powercap (...)"}], 300)
    assert none["joules"] is None and none["joules_per_token"] is None
    assert none["reason"] == "not available: no /sys/class/powercap (...)"
    off = isolation_block(device="cpu", method="--oracle-power off", others=None, window_s=None, excluded={},
                          reason="--oracle-power off")
    assert off["verdict"] == NOT_CHECKED and ISOLATED != NOT_CHECKED
    card = speed_card(rows(120), reasons=[], clock=BYTES_ARRIVAL, isolation=off, power=none)
    assert card["label"] == "headline"  # not checked is said, never a label
    md = "\n".join(markdown_lines(card))
    assert "- isolation: not checked (--oracle-power off)" in md and "- power: not available: no /sys/class/powercap" in md
