"""The sweep: each point of the grid gated against the one reference, in grid order, each as its own `pytest`
process (the user's other options, plus `--launch <point command>` and `--report-dir <sweep>/points/NN-<settings>/`),
then the classes, the promotion answer and the sweep report.

    code = run_sweep(config, gate_options, check_run_folders)   # None: not a sweep; else 0 a point equals the reference, 1 none
                                             # does, 2 interrupted or partial (--sweep-max, Ctrl-C), 4 usage (a
                                             # point's gate refused its options)

A point is its own gate run: its ladder, boots, canaries and speed card are the gate's, its report the gate's
identity report. A point whose server does not start is reported as such and the sweep goes on. Ctrl-C stops the
running point (its gate keeps its finished records and writes its partial report) and the sweep writes a partial
report of what finished. The report is rewritten after every point.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from oracle.store.stamps import utc_now
from oracle.terminal_lines import TerminalLines
from oracle.tool_run import StopWords, run_stopping
from oracle.redaction import public_text, redact_command
from oracle.ledger.connect import default_ledger
from oracle.store.folders import FolderError, fresh_report_dir, preflight
from oracle.store.json_files import InputFileError, read_json
from oracle.store.shapes import REPORT_FIX, ReportShape
from oracle.sweep.classes import signature
from oracle.sweep.grid import Axis, Point, SweepUsageError, grid
from oracle.sweep.options import sweep_settings
from oracle.sweep.points import PointTarget
from oracle.sweep.report import point_json, sweep_json, write_report
from oracle.sweep.repro_hook import run_repro_for

__all__ = ["POINT_ENV", "PointRun", "SweepConfig", "SweepSession", "run_sweep", "sweep_config"]

POINT_ENV = "ORACLE_SWEEP_POINT"  # set in a point's gate process: there --sweep (from addopts too) is not a sweep
PROMOTED, NONE, PARTIAL, USAGE = 0, 1, 2, 4
# Its points are gates of their own processes: no server or request of its own to fail here, only Ctrl-C.
STOP_WORDS = StopWords(interrupted="interrupted (Ctrl-C) between points; the points finished before it are kept, "
                                   "nothing was retried", failures=())
# Options the sweep sets per point itself, dropped from the user's arguments (each as `--x V` or `--x=V`).
_OWN_OPTIONS = ("--sweep", "--sweep-max", "--launch", "--server-args", "--report-dir")
_OWN_FLAGS = ("--sweep-no-repro",)


@dataclass(frozen=True)
class SweepConfig:
    backend: str
    axes: tuple[Axis, ...]
    points: tuple[Point, ...]  # the whole grid, in order
    sweep_max: int | None
    launch: str | None
    server_args: str
    reference: Path
    report_dir: Path
    args: tuple[str, ...]  # the user's other pytest arguments
    cwd: Path
    repro: bool = True  # --sweep-no-repro: False
    ledger: str | None = None  # what every point appends to: --ledger, else the ledger beside the sweep's folder

    @property
    def to_run(self) -> tuple[Point, ...]:
        return self.points[: self.sweep_max] if self.sweep_max else self.points


@dataclass
class PointRun:
    point: Point
    folder: Path
    command: str  # the point's launch command or --server-args, redacted
    status: str = "not run"  # finished, did not start, stopped, interrupted, error, not run
    exit_code: int | None = None
    wall_s: float = 0.0
    why: str = ""
    identity: dict = field(default_factory=dict)


def _user_args(args: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in _OWN_FLAGS:
            continue
        elif a in _OWN_OPTIONS:
            skip = True
        elif not a.startswith(tuple(f"{o}=" for o in _OWN_OPTIONS)):
            out.append(a)
    return tuple(out)


def sweep_config(config: pytest.Config, read_options: Callable[[pytest.Config], Any],
                 check_folders: Callable[..., None], *, gate_on: bool = True) -> SweepConfig | None:
    """The sweep's options cross-checked (the gate's own checks first: `read_options` is the gate's reader,
    `oracle.gate.options.gate_options`, and `check_folders` its folder check, `gate.folders.check_run_folders`,
    both passed in by the plugin, with `gate_on`: whether --backend is given); None when this is not a sweep."""
    if os.environ.get(POINT_ENV):
        return None
    axes, sweep_max, repro = sweep_settings(config.option, gate_on=gate_on)
    if not axes:
        return None
    points = tuple(grid(axes))
    options = read_options(config)  # the gate's own checks first (--backend among them)
    from oracle.backends import family_of
    from oracle.store.reference import ReferenceError, load_reference

    if options.urls:
        raise SweepUsageError("--sweep starts a server for each point: give --launch CMD (with {port}) or use the "
                              "embedded server, not --oracle-url / --servers")
    if family_of(options.backend).in_process:
        raise SweepUsageError(f"--backend {options.backend} runs in this process: there is no server command to sweep; "
                              "use a server family (llamacpp, vllm) with --launch or the embedded server")
    if options.record:
        raise SweepUsageError("--sweep gates every point against one reference and records none: drop --record "
                              "(record the reference first with --record DIR, then sweep with --reference DIR)")
    if options.reference is None:
        raise SweepUsageError("--sweep gates every point against one reference: add --reference DIR (record it "
                              "first: pytest --backend=... --record DIR)")
    try:
        load_reference(options.reference)
    except ReferenceError as exc:
        raise SweepUsageError(f"--reference {options.reference}: {exc}") from None
    report_dir = options.report_dir or fresh_report_dir("sweep")
    check_folders(options, report_dir, default=options.report_dir is None, marker="sweep.json")
    try:
        preflight(report_dir, "--report-dir")
    except FolderError as exc:
        raise SweepUsageError(str(exc)) from None
    return SweepConfig(backend=options.backend, axes=axes, points=points, sweep_max=sweep_max,
                       launch=options.launch, server_args=options.server_args, reference=options.reference,
                       report_dir=report_dir, args=_user_args(config.invocation_params.args),
                       cwd=Path(config.invocation_params.dir), repro=repro,
                       ledger=options.ledger or str(default_ledger(report_dir)))


def run_sweep(config: pytest.Config, read_options: Callable[[pytest.Config], Any],
              check_folders: Callable[..., None], out=None, *, gate_on: bool = True) -> int | None:
    """pytest_cmdline_main's work under --sweep: None when this is not a sweep (the gate runs as usual). The
    secrets of its commands are remembered by `read_options`, before it refuses anything."""
    sweep = sweep_config(config, read_options, check_folders, gate_on=gate_on)
    return None if sweep is None else SweepSession(sweep, out).run()


class SweepSession(TerminalLines):
    def __init__(self, config: SweepConfig, out=None) -> None:
        self.config, self.out = config, out or sys.stdout
        self.lines_out = self.out
        self.runs = [PointRun(p, config.report_dir / "points" / p.folder, self._command(p)) for p in config.to_run]
        self.reference = signature(config.reference / "records")
        self.interruption: str | None = None
        self.repro: dict | None = None
        self.started = utc_now()

    def _command(self, point: Point) -> str:
        target = self._target(point)
        return redact_command(target.launch if target.launch is not None else target.server_args or "")

    def _target(self, point: Point) -> PointTarget:
        return PointTarget.of(point, launch=self.config.launch, server_args=self.config.server_args)

    # -- the run ------------------------------------------------------------------------------
    def run(self) -> int:
        c = self.config
        capped = f" (the first {len(self.runs)}: --sweep-max {c.sweep_max})" if len(self.runs) < len(c.points) else ""
        self._say(f"oracle sweep: {len(c.points)} point(s){capped} against the reference {c.reference}; "
                  f"report in {c.report_dir}")
        return run_stopping(self._run, stop=self._stop, words=STOP_WORDS)

    def _run(self) -> int:
        self._write()
        for run in self.runs:
            self._run_point(run)
            self._write()
            if run.status == "usage":
                return self._finish(USAGE)
            if self.interruption:
                break
        self._repro()
        return self._finish()

    def _stop(self, why: str) -> int:
        """Ctrl-C between two points (during a point, _run_point stops its gate): the partial report."""
        self._say("")
        self.interruption = self.interruption or why
        return self._finish()

    def _run_point(self, run: PointRun) -> None:
        c, target = self.config, self._target(run.point)
        argv = [sys.executable, "-m", "pytest", *c.args, *target.option_args, f"--report-dir={run.folder}",
                f"--ledger={c.ledger}"]
        env = {**os.environ, **target.env, POINT_ENV: str(run.point.index)}
        run.folder.mkdir(parents=True, exist_ok=True)
        log_path = c.report_dir / "points" / f"{run.point.folder}.log"
        self._start_line(f"point {run.point.index}/{len(self.runs)}: {run.point.label} ... ")
        t0 = time.perf_counter()
        with open(log_path, "wb") as log:
            # Its own session and process group: Ctrl-C reaches the sweep alone, which passes one SIGINT on, so the
            # point's gate stops as a gate does on Ctrl-C (its server stopped, its partial report written).
            proc = subprocess.Popen(argv, cwd=c.cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                code = proc.wait()
            except KeyboardInterrupt:
                self.interruption = (f"interrupted (Ctrl-C) during point {run.point.index} ({run.point.label}); "
                                     "the points finished before it are kept, nothing was retried")
                code = _stop(proc)
        run.wall_s, run.exit_code = round(time.perf_counter() - t0, 2), code
        public_log(log_path)
        self._judge(run, code, log_path)
        self._end_line(self._point_words(run))

    def _judge(self, run: PointRun, code: int, log_path: Path) -> None:
        report = run.folder / "identity.json"
        try:
            run.identity = read_json(report, ReportShape, fix=REPORT_FIX) if report.is_file() else {}
            unreadable = ""
        except InputFileError as exc:  # the point's gate wrote it: a point that broke it is reported, not fatal
            run.identity, unreadable = {}, str(exc)
        why = run.identity.get("interruption") or ""
        if unreadable and not self.interruption:
            run.status, run.why = "error", f"the point's report cannot be read: {unreadable}"
            return
        if self.interruption:
            run.status, run.why = "interrupted", self.interruption
        elif code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and run.identity.get("complete"):
            run.status = "finished"
        elif code == pytest.ExitCode.USAGE_ERROR and run.identity:
            run.status, run.why = "did not start", why or "the gate refused before any request (see its report)"
        elif code == pytest.ExitCode.USAGE_ERROR:
            run.status, run.why = "usage", _tail(log_path)
        elif code == pytest.ExitCode.INTERRUPTED:
            run.status, run.why = "stopped", why or _tail(log_path)
        else:
            run.status, run.why = "error", f"the point's gate exited {code}: {_tail(log_path)}"

    def _repro(self) -> None:
        """The first point whose outputs split from the reference (a divergent or near-tie prompt), reduced to a
        repro by `oracle.repro` (run_repro_for); its path, or why not, goes into the report."""
        if self.interruption or not self.config.repro:
            return
        data = self._data()
        first = next((p for p in data["points"] if p["status"] == "finished" and p["equals_reference"] is False), None)
        if first is None:
            return
        self._say(f"oracle sweep: the first point that splits from the reference, {first['index']} ({first['label']}), "
                  "to `oracle repro`:")
        self.repro = {"point": first["index"], **run_repro_for(self.config.report_dir / first["folder"])}
        self._say(f"oracle sweep: repro of point {first['index']}: "
                  + (self.repro.get("path") or f"not made: {self.repro.get('error')}"))

    # -- the report and the terminal ----------------------------------------------------------
    def _data(self, final: bool = False, code: int | None = None) -> dict:
        c = self.config
        points = [point_json(r.point, status=r.status, folder=str(r.folder.relative_to(c.report_dir)),
                             command=r.command, exit_code=r.exit_code, wall_s=r.wall_s, why=r.why,
                             identity=r.identity, sig=signature(r.folder / "records") if r.status == "finished" else {},
                             reference=self.reference) for r in self.runs]
        skipped = [point_json(p, status="not run", folder=None, command=self._command(p), exit_code=None, wall_s=0.0,
                              why=f"beyond --sweep-max {c.sweep_max}", identity={}, sig={}, reference=self.reference)
                   for p in c.points[len(self.runs):]]
        return sweep_json(backend=c.backend, reference=str(c.reference), launch=redact_command(c.launch or ""),
                          server_args=redact_command(c.server_args), axes=c.axes, points=points + skipped,
                          reference_sig=self.reference, sweep_max=c.sweep_max, interruption=self.interruption,
                          repro=self.repro, started=self.started, written=utc_now(), final=final, code=code)

    def _write(self, final: bool = False, code: int | None = None) -> dict:
        data = self._data(final, code)
        write_report(self.config.report_dir, data)
        return data

    def _finish(self, code: int | None = None) -> int:
        data = self._write(True, code)
        self._say(f"oracle sweep: {data['answer']}")
        for cls in data["classes"]:
            self._say(f"  class {cls['name']}: points {', '.join(str(p) for p in cls['points'])}"
                      + (" (= the reference)" if cls["equals_reference"] else ""))
        self._say(f"oracle sweep: report {self.config.report_dir / 'sweep.md'} (and sweep.json, sweep.html); "
                  f"exit {data['exit_code']}")
        return data["exit_code"]

    def _point_words(self, run: PointRun) -> str:
        if run.status != "finished":
            return f"{run.status} ({run.wall_s:.1f} s){': ' + run.why.splitlines()[0][:200] if run.why else ''}"
        exact = run.identity.get("summary", {}).get("exact") or [0, 0]
        return f"{run.identity.get('verdict')}, exact {exact[0]}/{exact[1]} ({run.wall_s:.1f} s)"



def _stop(proc: subprocess.Popen) -> int:
    """One SIGINT to the point's gate, then its own clean stop; a second Ctrl-C (or a gate that does not stop in
    a minute) kills its process group."""
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout=60)
    except (KeyboardInterrupt, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait()


def public_log(path: Path) -> None:
    try:
        text = path.read_text(errors="replace")
        path.write_text(public_text(text))
    except OSError:
        pass


def _tail(path: Path, lines: int = 6) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
