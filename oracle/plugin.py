"""pytest plugin (entry point `pytest11: oracle`): options, hooks and the gate session, nothing else.

Without --backend nothing changes and the project's own tests run. With --backend the
gate's items are collected instead (plus the canary modules), and the session does the work.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from .items import GATE_KEY, make_collector
from .options import add_options, gate_options
from .progress import ConditionProgress
from .session import GateSession
from .verdicts import INCONCLUSIVE, NOT_RUN

pytest_plugins = ["oracle.canary_options"]  # canary options and module selection


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
    worker = getattr(config, "workerinput", {}).get("workerid", "gw0")
    config.stash[GATE_KEY] = GateSession(options, worker=worker.removeprefix("gw"))


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
    # Only the prompts whose items survived -k / deselection are sent.
    gate.select({item.key for item in session.items if getattr(item, "kind", None) in ("tokens", "record", "logits")
                 and getattr(item, "key", None) is not None})
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None and session.config.get_verbosity() >= 0:
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
    message = gate.finish()
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is None:
        return
    if gate.state.interruption:
        tr.write_line(f"oracle: the run stopped midway: {gate.state.interruption}", red=True, bold=True)
    if message:
        tr.write_line(f"oracle: {message}")
    if (gate.report_dir / "identity.json").exists():
        tr.write_line(f"oracle: identity report ({gate.state.verdict()}) in {gate.report_dir}")
