"""pytest plugin (entry point `pytest11: oracle`): the options, and the gate's hooks registered when --backend is
given, nothing else.

Without --backend nothing changes and the project's own tests run; this module and the option declarations are all
of oracle such a session imports (no numpy, HTTP client or ledger: docs/architecture.md, "The plugin's cost"). With
--backend each hook hands its call to its namesake in `oracle.plugin_hooks`, imported then: the gate's items are
collected instead (plus the canary modules), and the session does the work.
"""

from __future__ import annotations

import os
import shlex

import pytest

from oracle.gate.declarations import add_options, dash_value_refusal, gate_options_given
from oracle.gate.renames import renamed_refusal
from oracle.redaction import public_text
from oracle.sweep.options import sweep_asked

__all__ = ["oracle_gate", "pytest_addoption", "pytest_cmdline_main", "pytest_collection_finish",
           "pytest_collection_modifyitems", "pytest_configure", "pytest_configure_node", "pytest_ignore_collect",
           "pytest_load_initial_conftests", "pytest_report_header", "pytest_report_teststatus",
           "pytest_runtest_protocol", "pytest_sessionfinish", "pytest_sessionstart", "pytest_terminal_summary",
           "pytest_testnodedown", "pytest_xdist_make_scheduler"]


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    add_options(parser)
    # The first hook oracle gets, before pytest parses the command line: a value starting with '-' given as its own
    # word would fail there with pytest's "expected one argument" and no word of the form that works.
    config = pluginmanager.get_plugin("pytestconfig")
    if config is not None:
        try:
            addopts = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
        except ValueError:  # pytest itself names an unclosed quote there
            addopts = []
        refusal = dash_value_refusal([*addopts, *config.invocation_params.args])
        if refusal:
            raise pytest.UsageError(public_text(refusal))


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]):
    """An option's old name (oracle/gate/renames.py) is answered before pytest parses the command line, where it would
    only be an "unrecognized argument"; after the initial conftests, so that an old name a conftest or another
    plugin declares is left to them. `args` holds addopts and PYTEST_ADDOPTS too."""
    result = yield
    declared = {name for group in [parser._anonymous, *parser._groups] for opt in group.options
                for name in opt.names()}
    refusal = renamed_refusal(args, declared)
    if refusal:
        raise pytest.UsageError(public_text(refusal))
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """--sweep: the sweep runs each point as its own gate (`oracle.sweep`) and its exit code is the run's."""
    o = config.option
    if sweep_asked(o) and not (o.help or o.version):
        from oracle.gate.folders import check_run_folders
        from oracle.gate.options import gate_options
        from oracle.plugin_hooks import public_errors
        from oracle.sweep.session import run_sweep

        with public_errors():
            return run_sweep(config, gate_options, check_run_folders, gate_on=o.backend is not None)
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "oracle_gate: an item of the oracle gate")
    if config.option.backend is None:
        given = gate_options_given(config.invocation_params.args)
        if given:  # without --backend pytest would run the tests of the current folder, ignoring them
            need = "these options need" if len(given) > 1 else "this option needs"
            raise pytest.UsageError(f"{', '.join(given)}: {need} --backend NAME (e.g. --backend=llamacpp): they "
                                    "belong to the oracle gate, and "
                                    "without --backend pytest runs the tests of the current folder instead")
        return
    _gate_hooks(config).start(config)


def _gate_hooks(config: pytest.Config):
    """`oracle.plugin_hooks` where --backend is given (imported then), else None: the hooks below have nothing to do."""
    if config.option.backend is None:
        return None
    from oracle import plugin_hooks as hooks

    return hooks


@pytest.fixture(scope="session")
def oracle_gate(request: pytest.FixtureRequest):
    """The running gate session (target started, prompts rendered) for canary modules."""
    hooks = _gate_hooks(request.config)
    if hooks is None:
        pytest.fail("this test needs the oracle gate: run it with --backend=...", pytrace=False)
    return hooks.gate_session(request.config)


def pytest_ignore_collect(collection_path, config: pytest.Config) -> bool | None:
    hooks = _gate_hooks(config)
    return hooks.ignore_collect(collection_path, config) if hooks else None


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    hooks = _gate_hooks(session.config)
    if hooks:
        hooks.sessionstart(session)


def pytest_report_header(config: pytest.Config) -> str | None:
    hooks = _gate_hooks(config)
    return hooks.report_header(config) if hooks else None


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    hooks = _gate_hooks(node.config)
    if hooks:
        hooks.configure_node(node)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    hooks = _gate_hooks(config)
    return hooks.xdist_make_scheduler(config, log) if hooks else None


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    hooks = _gate_hooks(node.config)
    if hooks:
        hooks.testnodedown(node, error)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    hooks = _gate_hooks(config)
    if hooks:
        hooks.collection_modifyitems(session, config, items)


def pytest_collection_finish(session: pytest.Session) -> None:
    hooks = _gate_hooks(session.config)
    if hooks:
        hooks.collection_finish(session)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    hooks = _gate_hooks(item.config)
    if hooks is None:
        return (yield)
    return (yield from hooks.runtest_protocol(item, nextitem))


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    hooks = _gate_hooks(config)
    return hooks.report_teststatus(report, config) if hooks else None


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    hooks = _gate_hooks(config)
    if hooks:
        hooks.terminal_summary(terminalreporter, exitstatus, config)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    hooks = _gate_hooks(session.config)
    if hooks:
        hooks.sessionfinish(session, exitstatus)
