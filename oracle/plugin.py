"""pytest plugin (entry point `pytest11: oracle`): options, hooks and the gate session, nothing else.

Without --backend nothing changes and the project's own tests run. With --backend the
gate's items are collected instead (plus the canary modules), and the session does the work.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from oracle.backends import RequestFailed
from oracle.gate.items import GATE_KEY, make_collector
from oracle.gate.controller import worker_payload
from oracle.gate.placement import PinnedScheduling, place, server_label, worker_index
from oracle.gate.server_set import differences, probe_identities
from oracle.options import add_options, gate_options
from oracle.gate.progress import ConditionProgress
from oracle.gate.session import GateSession
from oracle.compare.verdicts import INCONCLUSIVE, NOT_RUN

pytest_plugins = ["oracle.canary.options"]  # canary options and module selection


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "oracle_gate: an item of the oracle gate")
    if config.option.backend is None:
        return
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # The gate decides what runs, not testpaths: its own items plus the shipped canaries.
        config.args = [str(Path(str(resources.files("oracle.canaries"))))]
    options = gate_options(config)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:  # an xdist worker: its own server, its own folder under the controller's report
        index = worker_index(workerinput["workerid"])
        folder = Path(workerinput["oracle_report_dir"]) / "servers" / server_label(index)
        gate = GateSession(options, worker=index, role="worker", report_dir=folder)
    elif _xdist_controller(config):
        gate = GateSession(options, role="controller")
        if len(options.urls) > 1:
            _check_server_set(options)
    else:
        gate = GateSession(options)
    config.stash[GATE_KEY] = gate


def _xdist_controller(config: pytest.Config) -> bool:
    return getattr(config.option, "dist", "no") != "no" and bool(getattr(config.option, "tx", None))


def _check_server_set(options) -> None:
    """Refuse servers of different configurations before any worker starts (unless --allow-mixed-servers)."""
    labels = {server_label(i): url for i, url in enumerate(options.urls[:options.workers])}
    try:
        found = differences(probe_identities(options.backend, labels))
    except RequestFailed as exc:
        raise pytest.UsageError(f"could not read a server's identity: {exc}; check that every listed server "
                                "is up") from None
    if found and not options.allow_mixed_servers:
        raise pytest.UsageError("the servers are not one configuration; these identity fields differ:\n  "
                                + "\n  ".join(found) + "\nserve the same model and flags on every server, or pass "
                                "--allow-mixed-servers to gate them anyway")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist controller: tell each worker where the one report goes."""
    gate = _gate(node.config)
    if gate is not None:
        gate.report_dir.mkdir(parents=True, exist_ok=True)
        node.workerinput["oracle_report_dir"] = str(gate.report_dir.resolve())


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Each worker keeps to its own server: the items go where `placement.place` puts them."""
    if _gate(config) is not None:
        return PinnedScheduling(config, log)
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    gate = _gate(node.config)
    if gate is not None:
        output = getattr(node, "workeroutput", {}) or {}
        gate.worker_payloads[worker_index(node.gateway.id)] = output.get("oracle")


def _gate(config: pytest.Config) -> GateSession | None:
    return config.stash.get(GATE_KEY, None)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    gate = _gate(config)
    if gate is not None:
        collector = make_collector(session, gate)
        gate_items = list(collector.collect())
        # Reported like any collected node, so "collected N items" and xdist count them.
        config.hook.pytest_collectreport(report=pytest.CollectReport(collector.nodeid, "passed", None, gate_items))
        items[:0] = gate_items


def pytest_collection_finish(session: pytest.Session) -> None:
    gate = _gate(session.config)
    if gate is None or session.config.option.collectonly or not session.items:
        return
    if session.config.pluginmanager.hasplugin("dsession"):
        return  # the xdist controller runs no items; its workers start their own targets
    # Only the prompts whose items survived -k / deselection are sent; an xdist worker runs its share at c1.
    per_prompt = ("tokens", "record", "logits")
    prompts = {item.key for item in session.items if getattr(item, "kind", None) in per_prompt
               and getattr(item, "key", None) is not None}
    owned = None
    if gate.role == "worker":
        placement = place([item.nodeid for item in session.items], gate.options.workers)
        owned = {item.key for item, w in zip(session.items, placement)
                 if w == gate.server_index and getattr(item, "kind", None) in per_prompt
                 and getattr(item, "key", None) is not None}
    gate.select(prompts, owned)
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None and session.config.get_verbosity() >= 0 and gate.role != "worker":
        gate.progress = ConditionProgress(tr)
    gate.start()


@pytest.fixture(scope="session")
def oracle_gate(request: pytest.FixtureRequest) -> GateSession:
    """The running gate session (target started, prompts rendered) for canary modules."""
    gate = _gate(request.config)
    if gate is None:
        pytest.fail("this test needs the oracle gate: run it with --backend=...", pytrace=False)
    return gate


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    verdict = dict(report.user_properties).get("oracle_verdict")
    if report.when == "call" and report.failed and verdict in (INCONCLUSIVE, NOT_RUN):
        return verdict, "I" if verdict == INCONCLUSIVE else "N", verdict.upper()
    return None


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Inconclusive and not-run items have their own status word, so list their reasons here."""
    for word in (INCONCLUSIVE, NOT_RUN):
        reports = terminalreporter.stats.get(word, [])
        if not reports:
            continue
        terminalreporter.section(f"oracle: {word}", sep="_")
        for rep in reports:
            terminalreporter.write_line(f"{rep.nodeid} {word.upper()}")
            for line in str(rep.longrepr).splitlines():
                terminalreporter.write_line(f"  {line}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    gate = _gate(session.config)
    if gate is None:
        return
    if gate.role == "controller":
        message = gate.finish_merged(gate.worker_payloads)
        if gate.state.verdict() == "fail" and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a check outside the items (servers differ)
    else:
        message = gate.finish()
        if gate.role == "worker":
            session.config.workeroutput["oracle"] = worker_payload(gate)
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is None:
        return
    if tr._tw.width_of_current_line:  # after the progress dots (xdist's progress does not end its line)
        tr.write("\n")
    if gate.state.interruption:
        tr.write_line(f"oracle: the run stopped midway: {gate.state.interruption}", red=True, bold=True)
    for check in gate.state.checks:
        if check.kind == "servers" and check.outcome == "failed":
            tr.write_line(f"oracle: {check.detail}:\n" + "\n".join(check.lines), red=True, bold=True)
    if message:
        tr.write_line(f"oracle: {message}")
    if (gate.report_dir / "identity.json").exists():
        tr.write_line(f"oracle: identity report ({gate.state.verdict()}) in {gate.report_dir}")
