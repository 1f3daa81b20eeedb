"""A run pytest ends as interrupted names what stopped it (a signal, an internal stop), never "Ctrl-C" for all of
them; SIGTERM stops it like Ctrl-C: exit 2 and a partial report that says so (no server needed: the stop is planted
before the gate starts its target)."""

import json

import pytest

ARGS = ("-p", "no:cacheprovider", "--backend=llamacpp", "--oracle-url=http://127.0.0.1:9", "--canaries=none",
        "--report-dir=report")


def _stop_before_start(pytester, body: str) -> None:
    # A conftest's hook runs before the plugin's (the later registered first): the gate's start is never reached.
    pytester.makeconftest(f"import os, signal, pytest\n\ndef pytest_collection_finish(session):\n    {body}\n")


def test_an_internal_stop_is_named_as_one(pytester):
    _stop_before_start(pytester, 'pytest.exit("planted stop")')
    result = pytester.runpytest(*ARGS)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*oracle: the run stopped midway: stopped by pytest.exit: planted stop (an internal "
                                 "stop, asked for by a plugin or a test); every record finished before it is kept*"])
    rep = json.loads((pytester.path / "report" / "identity.json").read_text())
    assert rep["verdict"] == "partial" and rep["interruption"].startswith("stopped by pytest.exit: planted stop")
    assert "Ctrl-C" not in result.stdout.str()


def test_sigterm_stops_the_run_cleanly_and_is_named(pytester):
    _stop_before_start(pytester, "os.kill(os.getpid(), signal.SIGTERM)")
    result = pytester.runpytest_subprocess(*ARGS)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*oracle: the run stopped midway: stopped by SIGTERM (a signal sent to oracle's "
                                 "process: kill, a job scheduler or a container stop); every record finished*"])
    rep = json.loads((pytester.path / "report" / "identity.json").read_text())
    assert rep["verdict"] == "partial" and rep["interruption"].startswith("stopped by SIGTERM")


def test_ctrl_c_is_still_named_ctrl_c(pytester):
    _stop_before_start(pytester, "os.kill(os.getpid(), signal.SIGINT)")
    result = pytester.runpytest_subprocess(*ARGS)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*oracle: the run stopped midway: interrupted (Ctrl-C); every record finished*"])
