"""Folders oracle writes are kept apart from the paths it reads and from each other, and an earlier report is
never written over: each refused before anything is written or sent, naming both paths and the fix, every folder
given left byte-identical (no server needed: the folders are checked before one is touched)."""

import json

import pytest

from oracle_tests_conftest import tree_digest

BASE = ("-p", "no:cacheprovider", "--canaries=none")
SERVER = ("--backend=llamacpp", "--oracle-url=http://127.0.0.1:9")  # nothing listens there: refused before it is asked
GOOD = {"id": "a", "class": "chat", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}


@pytest.fixture
def given(pytester):
    """Folders a user gives: an earlier report, a folder holding the suite and the haystack, a link to it."""
    earlier = pytester.path / "earlier"
    earlier.mkdir()
    (earlier / "identity.json").write_text(json.dumps({"verdict": "fail"}) + "\n")
    (earlier / "identity.md").write_text("# fail\n")
    inputs = pytester.path / "inputs"
    inputs.mkdir()
    (inputs / "suite.jsonl").write_text(json.dumps(GOOD) + "\n")
    (inputs / "hay.txt").write_text("A paragraph of haystack.\n")
    (pytester.path / "link").symlink_to(inputs, target_is_directory=True)
    return {"earlier": earlier, "inputs": inputs}


@pytest.mark.parametrize("args, message", [
    (["--record=x", "--report-dir=x"], "*--report-dir x and --record x are the same folder (*): oracle writes both, "
                                       "and one would be written over by the other; nothing was written or sent; "
                                       "give --report-dir and --record folders apart from each other*"),
    (["--record=x/ref", "--report-dir=x"], "*--record x/ref lies inside --report-dir x (*)*oracle writes both*"),
    (["--report-dir=earlier"], "*--report-dir earlier holds an earlier report (earlier/identity.json): oracle never "
                               "writes over a report; nothing was written or sent; give --report-dir a new folder*"),
    (["--oracle-suite=inputs/suite.jsonl", "--report-dir=inputs"],
     "*--oracle-suite inputs/suite.jsonl lies inside --report-dir inputs (*): oracle would write with --report-dir where it "
     "reads --oracle-suite; nothing was written or sent; give --report-dir a folder apart from inputs/suite.jsonl*"),
    (["--haystack=inputs/hay.txt", "--report-dir=inputs/.."],
     "*--haystack inputs/hay.txt lies inside --report-dir inputs/.. (*)*"),
    (["--oracle-suite=inputs/suite.jsonl", "--report-dir=link"],  # a symlink to the folder is the folder
     "*--oracle-suite inputs/suite.jsonl lies inside --report-dir link (*/inputs/suite.jsonl is within */inputs)*"),
    (["--backend=python:inputs/runner.py:make", "--report-dir=inputs"],
     "*the runner of --backend inputs/runner.py lies inside --report-dir inputs*"),
])
def test_a_folder_written_over_what_is_read_is_refused_and_nothing_changes(pytester, given, args, message):
    before = tree_digest(pytester.path)
    backend = () if any(a.startswith("--backend") for a in args) else SERVER
    result = pytester.runpytest(*BASE, *backend, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert tree_digest(pytester.path) == before  # no report, no reference, no lock, no probe file
    assert not (pytester.path / "x").exists() and not (pytester.path / "reports").exists()
