"""An option renamed with the `oracle-` prefix (issue #51) given by its old name is answered with a usage error
that names the new one, read from the raw arguments (the old name is not declared); an old name that another
plugin or a conftest declares is theirs. (This file is left out of /work/wt/_brief/rename.sh's rewrite: it names the
old spellings on purpose.)"""

from __future__ import annotations

import pytest

from oracle.gate.declarations import add_options
from oracle.gate.renames import RENAMED, renamed_refusal


def test_every_new_name_is_declared_and_no_old_one():
    parser = pytest.Parser(_ispytest=True)
    add_options(parser)
    names = {name for group in parser._groups for opt in group.options for name in opt.names()}
    assert set(RENAMED.values()) <= names
    assert not set(RENAMED) & names


@pytest.mark.parametrize("args", [["--url=http://127.0.0.1:8080"], ["--url", "http://127.0.0.1:8080"]],
                         ids=["joined", "separate"])
def test_an_old_name_is_refused_naming_the_new_one(pytester, args):
    pytester.makepyfile("def test_a():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --url: oracle's option is now --oracle-url (renamed so that it cannot clash "
                                 "with another pytest plugin's); write --oracle-url*(docs/options.md lists every "
                                 "renamed option)"])
    assert "unrecognized arguments" not in result.stderr.str()


def test_an_old_name_in_pytest_addopts_is_refused_too_and_a_secret_stays_hidden(pytester, monkeypatch):
    pytester.makepyfile("def test_a():\n    pass\n")
    monkeypatch.setenv("PYTEST_ADDOPTS", "--plan --seed=7")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --plan: oracle's option is now --oracle-plan *; write --oracle-plan (docs*"])
    monkeypatch.setenv("PYTEST_ADDOPTS", "")
    result = pytester.runpytest("-p", "no:cacheprovider", "--url=http://me:hunter2@127.0.0.1:9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "hunter2" not in result.stderr.str() + result.stdout.str()
    result.stderr.fnmatch_lines(["*write --oracle-url=http://me:***@127.0.0.1:9 *"])


def test_an_old_name_a_conftest_declares_is_left_to_it(pytester):
    pytester.makeconftest("def pytest_addoption(parser):\n    parser.addoption('--url', default=None)\n")
    pytester.makepyfile("def test_a(request):\n    assert request.config.getoption('--url') == 'http://x'\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--url=http://x")
    result.assert_outcomes(passed=1)


def test_refusal_reads_words_before_the_double_dash_only():
    assert renamed_refusal(["--", "--url"], set()) is None
    assert renamed_refusal(["--oracle-url=x", "--score-url=y", "--urls"], set()) is None
    assert renamed_refusal(["--budget=10m"], set()).startswith("--budget: oracle's option is now --oracle-budget")
    assert renamed_refusal(["--budget=10m"], {"--budget"}) is None
