"""The plugin's hooks for a gate run, each named for the pytest hook of `oracle.plugin` that hands it the call
where --backend is given; imported there only, so that a session without it imports none of the gate
(docs/architecture.md, "The plugin's cost"). The hooks stay `oracle.plugin`'s own, so they keep its place among
other plugins' and conftests' (a conftest's hook runs before them).

    hooks.start(config)                                  # oracle.plugin's pytest_configure, with --backend
    hooks.sessionfinish(session, exitstatus)             # oracle.plugin's pytest_sessionfinish, and so on

`start` reads the options and keeps the gate session on the config; the hooks below find it there and drive it:
the items collected, the plan printed, the progress, the verdict words, the report and the ledger at the end.
"""

from __future__ import annotations

from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import pytest

from oracle.canary.plan import ignored as canary_ignored
from oracle.checks import CHECKS
from oracle.compare.verdicts import DROPPED, INCONCLUSIVE, NOT_RUN
from oracle.gate.controller import XdistController, worker_payload
from oracle.gate.items import GATE_KEY, GateItem, make_collector, plan_specs
from oracle.gate.placement import PinnedScheduling, place, server_label, worker_index
from oracle.gate.session import GateSession
from oracle.gate.options import OPTIONS_KEY, gate_options, options_of, xdist_role
from oracle.redaction import PublicStream, public_text, redact_command, redact_url, remember_secrets
from oracle.run.progress import ConditionProgress
from oracle.run.stop_cause import catch_sigterm, stop_cause

__all__ = ["collection_finish", "collection_modifyitems", "configure_node", "gate_session", "ignore_collect",
           "public_errors", "report_header", "report_teststatus", "runtest_protocol", "sessionfinish", "sessionstart",
           "start", "terminal_summary", "testnodedown", "xdist_make_scheduler"]


def ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Canary modules of kinds not in --canaries are not collected (`canary.plan.ignored`)."""
    return canary_ignored(collection_path, options_of(config))


def start(config: pytest.Config) -> None:
    """With --backend, as pytest configures: the options read, the gate session (or the xdist controller) made and
    kept on the config, where every hook below finds it."""
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # The gate decides what runs, not testpaths: its own items plus the shipped canaries.
        config.args = [str(Path(str(resources.files("oracle.canaries"))))]
    with public_errors():
        options = gate_options(config)  # it remembers the secrets of the commands and URLs given first
        config.stash[OPTIONS_KEY] = options  # the canary plan and modules read theirs there (options.check)
        remember_secrets(urls=options.urls)  # --servers FILE too
        role = xdist_role(config)
        if role == "worker":  # its own server, its own folder under the controller's report
            index = worker_index(config.workerinput["workerid"])
            folder = Path(config.workerinput["oracle_report_dir"]) / "servers" / server_label(index)
            config.stash[GATE_KEY] = GateSession(options, worker=index, report_dir=folder)
        elif role == "controller":
            config.stash[GATE_KEY] = XdistController(options)
        else:
            config.stash[GATE_KEY] = GateSession(options)
        config.stash[OPTIONS_KEY] = config.stash[GATE_KEY].options  # a gate follows its reference's canary set
    if role != "worker":  # a worker's interruption is its controller's to name
        config.pluginmanager.register(_StopWitness(), _StopWitness.name)


def gate_session(config: pytest.Config) -> GateSession:
    """The running gate session, for the `oracle_gate` fixture of the canary modules."""
    gate = _gate(config)
    if not isinstance(gate, GateSession):
        pytest.fail("this test needs the oracle gate: run it with --backend=...", pytrace=False)
    return gate


class _StopWitness:
    """Remembers what interrupted the run (pytest's pytest_keyboard_interrupt has no config to keep it on) and
    turns SIGTERM into an interruption for the run's length."""

    name = "oracle-stop-witness"

    def __init__(self) -> None:
        self.cause: str | None = None
        self.restore = catch_sigterm()

    def pytest_keyboard_interrupt(self, excinfo) -> None:
        self.cause = stop_cause(excinfo.value)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.restore()


@contextmanager
def public_errors():
    """A usage error is printed by pytest itself, outside the terminal reporter: its message is made public here."""
    try:
        yield
    except pytest.UsageError as exc:
        raise pytest.UsageError(*(public_text(str(a)) for a in exc.args)) from None


def sessionstart(session: pytest.Session) -> None:
    """Everything a gate run prints goes through `redaction.public_text` (the one terminal writer's stream)."""
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if _gate(session.config) is not None and tr is not None and not isinstance(tr._tw._file, PublicStream):
        tr._tw._file = PublicStream(tr._tw._file)


def report_header(config: pytest.Config) -> str | None:
    """What is gated, as identity records it (secrets redacted)."""
    gate = _gate(config)
    if gate is None:
        return None
    o = gate.options
    target = [f"--oracle-url {','.join(redact_url(u) for u in o.urls)}" if o.urls
              else f"--launch {redact_command(o.launch)}" if o.launch
              else "in this process" if gate.plan.in_process else "the embedded default"]
    target += [f"--oracle-model {o.model}"] if o.model else []
    target += [f"--server-args {redact_command(o.server_args)}"] if o.server_args else []
    return f"oracle: --backend {o.backend}, target {' '.join(target)}"


def configure_node(node) -> None:
    """xdist controller: tell each worker where the one report goes."""
    gate = _gate(node.config)
    if gate is not None:
        gate.prepare_report_dir()
        node.workerinput["oracle_report_dir"] = str(gate.report_dir.resolve())


def xdist_make_scheduler(config: pytest.Config, log):
    """Each worker keeps to its own server: the items go where `placement.place` puts them."""
    gate = _gate(config)
    if gate is not None:
        return PinnedScheduling(config, log, specs={s.nodeid: s for s in plan_specs(gate)})
    return None


def testnodedown(node, error) -> None:
    gate = _gate(node.config)
    if isinstance(gate, XdistController):
        output = node.workeroutput if hasattr(node, "workeroutput") else {}
        gate.receive(worker_index(node.gateway.id), (output or {}).get("oracle"))


def _gate(config: pytest.Config) -> GateSession | XdistController | None:
    return config.stash.get(GATE_KEY, None)


def collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    gate = _gate(config)
    if gate is not None:
        collector = make_collector(session, gate)
        gate_items = list(collector.collect())
        # Reported like any collected node, so "collected N items" and xdist count them.
        config.hook.pytest_collectreport(report=pytest.CollectReport(collector.nodeid, "passed", None, gate_items))
        items[:0] = gate_items


def collection_finish(session: pytest.Session) -> None:
    gate = _gate(session.config)
    if not isinstance(gate, GateSession) or session.config.option.collectonly or not session.items:
        return
    # Only the prompts whose items survived -k / deselection are sent; an xdist worker runs its share at c1.
    per_prompt = [item for item in session.items if isinstance(item, GateItem)
                  and item.spec.judges_prompt]
    owned = None
    if gate.worker is not None:
        specs = {s.nodeid: s for s in plan_specs(gate)}
        placement = dict(zip((i.nodeid for i in session.items),
                             place([i.nodeid for i in session.items], gate.options.workers, specs)))
        owned = {item.spec.key for item in per_prompt if placement[item.nodeid] == gate.worker}
    gate.select({item.spec.key for item in per_prompt}, owned)
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None and session.config.get_verbosity() >= 0 and gate.worker is None:
        gate.recorder.progress = ConditionProgress(tr)
    with public_errors():
        gate.start()
    _plan(session, gate, tr)


def _plan(session: pytest.Session, gate: GateSession, tr) -> None:
    """After the warm-up: the run plan, printed; the live line's ETA; --oracle-plan runs no item."""
    lines = gate.run_plan.make(session.items)  # the needle canary asks it for the budget's drops
    if tr is not None and gate.worker is None and (session.config.get_verbosity() >= 0 or gate.options.plan_only):
        tr.ensure_newline()
        for line in lines:
            tr.write_line(line)
    if isinstance(gate.recorder.progress, ConditionProgress):
        gate.recorder.progress.suffix = gate.run_plan.suffix
    if gate.options.plan_only:
        session.items[:] = []  # the plan is the run's answer: no item, exit 0 (pytest_sessionfinish)


def runtest_protocol(item: pytest.Item, nextitem):
    """The whole run's progress: a line as each part of the plan ends, with the corrected ETA."""
    gate = _gate(item.config)
    if not isinstance(gate, GateSession):
        return (yield)
    gate.run_plan.started(item.nodeid)
    try:
        return (yield)
    finally:
        line = gate.run_plan.finished(item.nodeid)
        tr = item.config.pluginmanager.get_plugin("terminalreporter")
        if line and tr is not None and gate.worker is None and item.config.get_verbosity() >= 0:
            tr.write_line(line)


def report_teststatus(report: pytest.TestReport, config: pytest.Config):
    verdict = dict(getattr(report, "user_properties", ())).get("oracle_verdict")  # a CollectReport has none
    if report.when == "call" and report.failed and verdict in (INCONCLUSIVE, NOT_RUN):
        return verdict, "I" if verdict == INCONCLUSIVE else "N", verdict.upper()
    if report.when == "call" and report.passed and verdict == DROPPED:  # passed, not sent: its own word
        return verdict, "d", verdict.upper()
    return None


def terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Inconclusive, not-run and dropped items have their own status word, so list their reasons here."""
    for word in (INCONCLUSIVE, NOT_RUN, DROPPED):
        reports = terminalreporter.stats.get(word, [])
        if not reports:
            continue
        terminalreporter.section(f"oracle: {word}", sep="_")
        for rep in reports:
            reason = dict(rep.user_properties).get("oracle_detail") if word == DROPPED else None
            terminalreporter.write_line(f"{rep.nodeid} {word.upper()}" + (f": {reason}" if reason else ""))
            for line in ([] if word == DROPPED else str(rep.longrepr).splitlines()):
                terminalreporter.write_line(f"  {line}")


def sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    gate = _gate(session.config)
    if gate is None:
        return
    if exitstatus == pytest.ExitCode.INTERRUPTED and not gate.state.interruption:
        witness = session.config.pluginmanager.get_plugin(_StopWitness.name)
        cause = witness.cause if witness is not None and witness.cause else "stopped (pytest gave no cause)"
        gate.state.interruption = (f"{cause}; every record finished before it is kept under "
                                   f"{gate.report_dir}; no request was retried")
    message = gate.finish()
    planned_only = gate.options.plan_only and not gate.state.interruption
    if planned_only and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK  # --oracle-plan: the plan was the answer
    localized = _localize(gate)  # before the ledger: the report it appends holds the localize key
    ledger_note = None if gate.options.plan_only else _append_to_ledger(gate)
    if isinstance(gate, XdistController):
        if gate.state.verdict() == "fail" and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a check outside the items (servers differ)
    elif gate.worker is not None:
        session.config.workeroutput["oracle"] = worker_payload(gate)
    # The run stopped midway: no verdict on what was not run. (The controller says so for an xdist worker, whose
    # exit status 2 xdist would take for a Ctrl-C.)
    stopped = gate.state.interruption and (isinstance(gate, XdistController) or gate.worker is None)
    if stopped and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        session.exitstatus = pytest.ExitCode.INTERRUPTED
    if gate.report.write_error and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a run whose report is not on disk never passes
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is None:
        return
    if tr._tw.width_of_current_line:  # after the progress dots (xdist's progress does not end its line)
        tr.write("\n")
    if gate.state.interruption and session.exitstatus != pytest.ExitCode.USAGE_ERROR:  # a usage error says it
        tr.write_line(f"oracle: the run stopped midway: {gate.state.interruption}", red=True, bold=True)
    for check in gate.state.checks:
        if check.kind == "servers" and check.outcome == "failed":
            tr.write_line(f"oracle: {check.detail}:\n" + "\n".join(check.lines), red=True, bold=True)
    if gate.report.write_error:
        tr.write_line(f"oracle: {gate.report.write_error}", red=True, bold=True)
    if message:
        tr.write_line(f"oracle: {message}")
    for check in CHECKS:  # each check kind's own lines (the width map), from the finished state
        state = gate.state.states.get(check.name)
        for line in check.terminal(state) if check.terminal is not None and state is not None else ():
            tr.write_line(f"oracle: {public_text(line)}")
    if ledger_note:
        tr.write_line(f"oracle: {ledger_note}", yellow=True, bold=True)
    for line in localized:
        tr.write_line(line)
    for check in CHECKS:  # each check kind's warnings (a reference without canary completions: the re-record)
        for line in check.warnings(gate.state) if check.warnings is not None else ():
            tr.write_line(f"oracle: {line}", yellow=True)
    if (gate.report_dir / "identity.json").exists():
        tr.write_line(f"oracle: identity report ({gate.state.verdict()}) in {gate.report_dir}")


def _localize(gate: GateSession | XdistController) -> list[str]:
    """--localize: where a gate finished whole (not an xdist worker's part) with a split, `oracle localize` on its
    report; a gate that passed loads nothing more."""
    if not gate.options.localize or gate.plan.mode != "gate" or gate.state.interruption:
        return []
    if isinstance(gate, GateSession) and gate.worker is not None:
        return []
    from oracle.localize.gate_hook import localize_gate_run  # torch and OpenVINO only when a split is localized

    lines, summary = localize_gate_run(gate.report_dir)
    if summary is not None:  # identity.json's `localize` key: the report written again (and sealed) with it
        gate.state.localize = summary
        gate.report.write()
    return lines


def _append_to_ledger(gate: GateSession | XdistController) -> str | None:
    """Where a run finishes: append its report to the ledger (not an xdist worker's: the controller appends the
    merged one). A ledger that cannot be written costs the run nothing: the reason goes into the report's notes
    and is returned for the terminal."""
    if isinstance(gate, GateSession) and gate.worker is not None:
        return None
    if gate.state.interruption and not gate.state.finished:
        return None  # refused or stopped before any record: nothing happened that history could show
    from oracle.ledger.writer import append_run  # SQLAlchemy only for gate runs, not for every pytest run

    note = append_run(gate.report_dir, gate.options.ledger)
    if note:
        gate.state.note(note)
        gate.report.write()
    return note
