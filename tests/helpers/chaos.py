"""The chaos run: a ladder-and-boots gate on the embedded llama-server (its own process, as a user runs
it), one fault injected at a seeded moment, then what a gate people trust must leave behind checked.

    chaos = Chaos(workdir, suite=SUITE, reference=REF)
    plan = chaos.clean("baseline")      # the gate without a fault: exit 0, the order of its records
    outcome = chaos.round("server-kill", seed=7, plan=plan)
    assert outcome.problems == [], outcome.describe()

The faults: the server killed (SIGKILL) or frozen (SIGSTOP, with a short --request-timeout), its connections
cut (a proxy in front of it resets one stream: reset_launch.py), the report's files unable to grow
(RLIMIT_FSIZE set on the running gate, as a full disk), oracle itself killed (SIGKILL) or interrupted
(SIGINT). After each: the exit code is the documented one, every record on disk parses and matches the hash
its own meta and the report give, the report names what stopped the run, no process of the run is alive, the
reference is byte-identical, no traceback reached the user.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import resource
import shlex
import signal
import subprocess
import sys
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from oracle.store.records import RecordKey, token_sha256
from oracle.targets.embedded import default_model, embedded_command, llama_cpp_tools

__all__ = ["EXIT", "FAULTS", "FREEZE_TIMEOUT_S", "Chaos", "Outcome", "Plan", "server_pids", "tree_digest"]

REPO = Path(__file__).resolve().parents[2]
RESET_LAUNCH = Path(__file__).resolve().parent / "reset_launch.py"
FAULTS = ("server-kill", "server-freeze", "connection-reset", "write-fail", "oracle-interrupt", "oracle-kill")
# docs/faults.md: a server fault, a failed write and Ctrl-C stop the run with exit 2; a SIGKILLed oracle says
# nothing.
EXIT = {"server-kill": 2, "server-freeze": 2, "connection-reset": 2, "write-fail": 2, "oracle-interrupt": 2,
        "oracle-kill": -signal.SIGKILL}
# What the interruption (identity.json, or the terminal where the disk took nothing more) says stopped the
# run.
CAUSE = {
    "server-kill": r"the connection broke after \d+ tokens|the stream ended without its final message"
                   r"|connect",
    # Silent past the read timeout, or past the whole request's deadline (the same value: either comes first).
    "server-freeze": r"the server sent nothing for \d+ s after \d+ tokens \(--request-timeout \d+\)"
                     r"|the server sent no token for \d+ s after \d+ tokens .*reached --request-timeout \d+ s",
    # the proxy's HTTP/1.0 framing ends a reset body as a close would (test_server_faults_llamacpp.py says why)
    "connection-reset": r"the connection broke after \d+ tokens: reset or closed by the server|the stream ended "
                        r"without its final message after \d+ tokens \(server died or connection cut\)",
    "write-fail": r"writing \S+ failed \(File too large\)",
    "oracle-interrupt": r"^interrupted \(Ctrl-C\); every record finished before it is kept under",
}
# --request-timeout of a freeze round, at least: past the silences of a quiet 2-core machine's server. A loaded
# machine's requests take longer (a first request ran past 10 s in all before the fault was planted): the round
# takes FREEZE_MARGIN times the slowest request of the clean gate when that is more.
FREEZE_TIMEOUT_S = 10
FREEZE_MARGIN = 3
FREEZE_STOP_S = 60  # past --request-timeout: a freeze round's time to stop its server and write its report
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|INTERNALERROR")


def tree_digest(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def _state(pid: int) -> str | None:
    """The process's state letter (None: gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def marked_pids(marker: str) -> list[int]:
    """Live processes (not zombies) whose environment holds marker: all a gate run started inherits it."""
    out = []
    for env in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in env.read_bytes() and _state(int(env.parent.name)) not in (None, "Z"):
                out.append(int(env.parent.name))
        except OSError:
            continue
    return out


def server_pids(marker: str) -> list[int]:
    """The run's live llama-server processes, the newest last."""
    pids = []
    for pid in marked_pids(marker):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "llama-server":
                pids.append((int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]), pid))
        except (OSError, IndexError, ValueError):
            continue
    return [pid for _, pid in sorted(pids)]


@dataclass
class Plan:
    """The order a clean gate finishes its records in, and each record's boot and completion length."""

    keys: list[str]
    boots: list[int]
    levels: list[int]  # each record's concurrency: the records of a level-2 wave land together
    requests: dict[int, int]  # boot -> its /completion requests
    shortest: int  # completion tokens of the shortest answer
    slowest_s: float = 0.0  # the clean gate's longest request, sent to answered (its first request included)

    def freeze_timeout(self, floor_s: int) -> int:
        """A freeze round's --request-timeout: the floor, or FREEZE_MARGIN times the slowest clean request."""
        return max(floor_s, math.ceil(FREEZE_MARGIN * self.slowest_s))

    def moments(self) -> list[int]:
        """Record counts after which a fault still meets a request of the same server, though more records
        land while it is on its way: the next two records one at a time in that boot, or the next three
        in it."""
        def same_boot(k: int, n: int) -> bool:
            return self.boots[k:k + n] == [self.boots[k - 1]] * n

        return [k for k in range(1, len(self.keys))
                if same_boot(k, 3) or (same_boot(k, 2) and self.levels[k:k + 2] == [1, 1])]


@dataclass
class Outcome:
    fault: str
    seed: int
    moment: str
    exit_code: int | None = None
    seconds: float = 0.0
    records: int = 0  # on disk after the fault
    lost: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    servers_left: int = 0
    input_changed: bool = False
    traceback: bool = False
    output: str = ""

    @property
    def stopped_cleanly(self) -> bool:
        return not self.problems

    def describe(self) -> str:
        head = (f"{self.fault} (seed {self.seed}, {self.moment}): exit {self.exit_code} after "
                f"{self.seconds:.1f} s")
        return "\n".join([head, *("  " + p for p in self.problems), "--- output tail:", self.output[-4000:]])


class Chaos:
    """Gates on the embedded llama-server (`-np 2`, so the ladder's level 2 overlaps) against reference."""

    def __init__(self, workdir: Path, *, suite: Path, reference: Path, max_tokens: int = 32,
                 freeze_timeout_s: int = FREEZE_TIMEOUT_S) -> None:
        self.workdir, self.suite, self.reference, self.max_tokens = workdir, suite, reference, max_tokens
        self.freeze_timeout_s = freeze_timeout_s
        (workdir / "pytest.ini").write_text("[pytest]\n")  # a rootdir of its own, away from the project's

    def argv(self, report: Path, *extra: str) -> list[str]:
        # hypothesis's pytest plugin (where installed) would import hypothesis at every gate's end: ~0.7 s, unused
        return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                "--backend=llamacpp", f"--oracle-suite={self.suite}", f"--max-tokens={self.max_tokens}",
                f"--reference={self.reference}", "--ladder=1,2", "--boots=2", "--canaries=none", "--warmup=0",
                f"--report-dir={report}", "--rootdir", str(self.workdir), *extra,
                *([] if any(a.startswith("--launch") for a in extra) else ["--server-args=-np 2"])]

    def env(self, marker: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
        env["ORACLE_CHAOS_MARK"] = marker  # the gate and every process it starts carry it
        return env

    def clean(self, name: str) -> Plan:
        """The gate with no fault: it must pass (exit 0) and leave no server; its records give the plan."""
        report = self.workdir / name
        marker = uuid.uuid4().hex
        done = subprocess.run(self.argv(report), cwd=self.workdir, env=self.env(marker), capture_output=True,
                              text=True, timeout=1800)
        out = done.stdout + done.stderr
        if done.returncode != 0 or TRACEBACK.search(out):
            raise AssertionError(f"the clean gate {name} exited {done.returncode}:\n{out[-4000:]}")
        if marked_pids(marker):
            raise AssertionError(f"the clean gate {name} left processes running: {marked_pids(marker)}")
        metas = [json.loads(p.read_text()) for p in (report / "records").glob("*/*.json")
                 if not p.name.startswith(".")]
        metas.sort(key=lambda m: m["finished_at"])
        boots = [int(m["condition"].split("-")[0][4:]) for m in metas]
        levels = [int(m["condition"].split("-")[1][1:]) for m in metas]
        return Plan([str(RecordKey.of_meta(m)) for m in metas], boots, levels,
                    {b: boots.count(b) for b in set(boots)}, min(m["completion_tokens"] for m in metas),
                    max(m["finished_at"] - m["started_at"] for m in metas))

    # -- one round ---------------------------------------------------------------------------------------

    def round(self, fault: str, *, seed: int, plan: Plan) -> Outcome:
        """One gate, one fault at a moment drawn from seed; the outcome lists every promise broken."""
        rng = random.Random(f"{fault}:{seed}")
        report = self.workdir / f"{fault}-{seed}"
        marker = uuid.uuid4().hex
        extra: list[str] = []
        timeout = plan.freeze_timeout(self.freeze_timeout_s)
        if fault == "server-freeze":
            extra.append(f"--request-timeout={timeout}")
        if fault == "connection-reset":
            boot = rng.choice(sorted(plan.requests))
            index, events = rng.randint(1, plan.requests[boot]), rng.randint(1, max(1, plan.shortest - 1))
            extra.append(f"--launch={self._reset_launch(report.with_suffix('.boots'), boot, index, events)}")
            moment = f"boot {boot}, request {index}, after {events} events"
            after, delay = None, 0.0
        else:
            after = rng.choice(plan.moments() if fault.startswith("server") else range(1, len(plan.keys) - 1))
            delay = round(rng.uniform(0.0, 0.15), 3)
            moment = f"after {after} record(s) + {delay * 1000:.0f} ms"
        outcome = Outcome(fault, seed, moment)
        before = tree_digest(self.reference)
        started = time.monotonic()
        gate = subprocess.Popen(self.argv(report, *extra), cwd=self.workdir, env=self.env(marker),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            if after is not None:
                if self._wait_for(gate, report, after):
                    time.sleep(delay)
                    self._inject(fault, gate, marker, outcome)
                else:  # nothing was tested: the run ended (or stopped for another cause) before the moment
                    outcome.problems.append(f"the gate ended before the fault's moment ({moment})")
            # A frozen server is hung by --request-timeout's measure: the run must stop within it (and the
            # stop's own seconds), never wait out the 600 s an unbounded request would.
            bound = timeout + FREEZE_STOP_S if fault == "server-freeze" and after else 1800
            try:
                outcome.output, _ = gate.communicate(timeout=bound)
            except subprocess.TimeoutExpired:
                outcome.problems.append(f"the run did not stop within {bound} s of the freeze (--request-"
                                        f"timeout {timeout}): it waits on the server")
                gate.send_signal(signal.SIGINT)  # its partial report and its server stopped, for the checks
                outcome.output, _ = gate.communicate(timeout=120)
        finally:
            if gate.poll() is None:
                gate.kill()
                gate.communicate()
        outcome.exit_code, outcome.seconds = gate.returncode, time.monotonic() - started
        self._judge(outcome, report, marker, before)
        return outcome

    def _reset_launch(self, state: Path, boot: int, index: int, events: int) -> str:
        tools = llama_cpp_tools()
        inner = embedded_command(tools, default_model(), "-np 2").removeprefix("exec ")
        inner = inner.replace("{port}", "{inner}")
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in tools.env.items())
        return (f"{env} {shlex.quote(sys.executable)} {shlex.quote(str(RESET_LAUNCH))} "
                f"--state {shlex.quote(str(state))} --port {{port}} --boot {boot} --request-index {index} "
                f"--after-events {events} -- {inner}")

    @staticmethod
    def _wait_for(gate: subprocess.Popen, report: Path, records: int) -> bool:
        """Wait until `records` records are on disk; False when the gate ended first."""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and gate.poll() is None:
            written = [p for p in (report / "records").glob("*/*.json") if not p.name.startswith(".")]
            if len(written) >= records:
                return True
            time.sleep(0.01)
        return False

    @staticmethod
    def _inject(fault: str, gate: subprocess.Popen, marker: str, outcome: Outcome) -> None:
        if fault in ("server-kill", "server-freeze"):
            servers = server_pids(marker)
            if not servers:
                outcome.problems.append("no llama-server of the run was alive at the moment of the fault")
                return
            os.kill(servers[-1], signal.SIGKILL if fault == "server-kill" else signal.SIGSTOP)
        elif fault == "write-fail":  # every file oracle writes from now on fails to grow (EFBIG): a full disk
            resource.prlimit(gate.pid, resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
        elif fault == "oracle-interrupt":
            gate.send_signal(signal.SIGINT)
        elif fault == "oracle-kill":
            gate.kill()

    # -- what must hold afterwards -----------------------------------------------------------------------

    def _judge(self, outcome: Outcome, report: Path, marker: str, before: dict[str, str]) -> None:
        fault, problems = outcome.fault, outcome.problems
        if outcome.exit_code != EXIT[fault]:
            problems.append(f"exit code {outcome.exit_code}, documented {EXIT[fault]}")
        if TRACEBACK.search(outcome.output):
            outcome.traceback = True
            problems.append("a traceback reached the user")
        deadline = time.monotonic() + (20 if fault == "oracle-kill" else 2)  # the parent-death signal's way
        while marked_pids(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = marked_pids(marker)
        if left:
            outcome.servers_left = len(left)
            problems.append(f"processes of the run left running: {left} ({self._names(left)})")
            for pid in left:  # not to disturb the next round
                os.kill(pid, signal.SIGKILL)
        if tree_digest(self.reference) != before:
            outcome.input_changed = True
            problems.append(f"the reference {self.reference} changed")
        on_disk = self._records(report, outcome)
        outcome.records = len(on_disk)
        try:
            rep = json.loads((report / "identity.json").read_text())
        except (OSError, ValueError) as exc:
            problems.append(f"identity.json unreadable: {exc}")
            return
        if rep.get("verdict") != "partial":
            problems.append(f"identity.json verdict {rep.get('verdict')!r}, expected 'partial'")
        listed = rep.get("records", {}).get("finished", {})
        for key, meta in listed.items():
            if key not in on_disk:
                outcome.lost.append(key)
                problems.append(f"{key} is listed in identity.json but not on disk")
            elif meta.get("completion_sha256") != on_disk[key]:
                outcome.lost.append(key)
                problems.append(f"{key} on disk does not match the hash identity.json lists")
        # A final report is written after every fault oracle lives through; a killed oracle's, or one on a
        # disk that took nothing more, is the last written: at most the records since then are not in it yet.
        final = fault not in ("oracle-kill", "write-fail")
        unlisted = sorted(set(on_disk) - set(listed))
        if final and unlisted:
            problems.append(f"records on disk missing from identity.json's records.finished: {unlisted}")
        if fault in CAUSE:
            said = (rep.get("interruption") or "") if final else self._terminal_cause(outcome.output)
            if not re.search(CAUSE[fault], said, re.M):
                problems.append(f"the report does not say what stopped the run: {said!r}")
        stale = r"oracle: writing \S+ failed \(File too large\); the report in \S+ is the last one written"
        if fault == "write-fail" and not re.search(stale, outcome.output):
            problems.append("the terminal does not say that the report on disk is the last one written")
        if fault != "oracle-kill" and list(report.rglob("*.tmp")):  # a failed write takes its temp file away
            problems.append(f"half-written files left: {sorted(map(str, report.rglob('*.tmp')))}")

    @staticmethod
    def _terminal_cause(output: str) -> str:
        found = re.search(r"^oracle: the run stopped midway: (.*)$", output, re.M)
        return found.group(1) if found else ""

    @staticmethod
    def _records(report: Path, outcome: Outcome) -> dict[str, str]:
        """Every record on disk (key -> completion sha256); a record that does not parse, or whose arrays do
        not match its own meta, is lost."""
        out = {}
        for meta_path in sorted((report / "records").glob("*/*.json")):
            if meta_path.name.startswith("."):
                continue
            try:
                meta = json.loads(meta_path.read_text())
                with np.load(meta_path.with_suffix(".npz")) as arrays:
                    ids = arrays["completion_ids"].tolist()
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
                outcome.lost.append(str(meta_path))
                outcome.problems.append(f"{meta_path.relative_to(report)} does not parse: {exc}")
                continue
            key = str(RecordKey.of_meta(meta))
            if token_sha256(ids) != meta.get("completion_sha256"):
                outcome.lost.append(key)
                outcome.problems.append(f"{key}: its arrays do not match its completion_sha256")
            out[key] = meta.get("completion_sha256")
        return out

    @staticmethod
    def _names(pids: list[int]) -> str:
        names = []
        for pid in pids:
            try:
                names.append(Path(f"/proc/{pid}/comm").read_text().strip())
            except OSError:
                names.append("?")
        return ", ".join(names)
