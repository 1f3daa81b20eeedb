"""`oracle bisect`'s input checks: each bad input exits 2 before any server starts, its message naming the fix;
identical commands have nothing to bisect (exit 0, nothing started)."""

from __future__ import annotations

import json

import pytest

from oracle.cli import main

GOOD = "srv -m m.gguf --port {port}"


def bisect(capsys, tmp_path, *argv: str) -> tuple[int, str]:
    code = main(["bisect", "--report-dir", str(tmp_path / "rep"), *argv])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("argv, words", [
    (["--backend", "nosuch", "--good", GOOD, "--bad", GOOD + " -x"], "unknown family 'nosuch'; known families"),
    (["--backend", "hf", "--good", GOOD, "--bad", GOOD + " -x"], "runs the model in this process"),
    (["--backend", "llamacpp", "--good", "srv -m m.gguf", "--bad", GOOD + " -x"], "--good: no {port} in the command"),
    (["--backend", "llamacpp", "--good", GOOD, "--bad", "srv -x"], "--bad: no {port} in the command: put {port}"),
    (["--backend", "llamacpp", "--good", GOOD, "--bad", GOOD + " && echo"], "--bad: the command holds the shell "
                                                                            "operator '&&'"),
    (["--backend", "llamacpp", "--good", GOOD, "--bad", GOOD + " -x", "--prompts", "nope"],
     "--prompts 'nope': no prompt 'nope' in the suite default; its ids: code-palindrome, "),
    (["--backend", "llamacpp", "--good", GOOD, "--bad", GOOD + " -x", "--trials", "0"], "--trials '0': must be at "
                                                                                        "least 1"),
    (["--backend", "llamacpp", "--good", GOOD, "--bad", GOOD + " -x", "--max-probes", "many"],
     "--max-probes 'many': expected a whole number"),
    (["--backend", "llamacpp", "--good", GOOD, "--bad", GOOD + " -x", "--suite", "nosuch"], "no built-in suite"),
])
def test_bad_input_exits_2_naming_the_fix(capsys, tmp_path, argv, words):
    code, out = bisect(capsys, tmp_path, *argv)
    assert code == 2 and "oracle bisect: " in out and words in out, out
    assert not (tmp_path / "rep").exists()  # refused before anything was written or started


def test_a_missing_option_is_a_usage_error(capsys, tmp_path):
    code, out = bisect(capsys, tmp_path, "--backend", "llamacpp", "--good", GOOD)
    assert code == 2 and "--bad" in out


@pytest.mark.parametrize("good, bad", [(GOOD, GOOD), (GOOD, "  " + GOOD + " "), ("", "")])
def test_identical_commands_have_nothing_to_bisect(capsys, tmp_path, good, bad):
    code, out = bisect(capsys, tmp_path, "--backend", "llamacpp", "--good", good, "--bad", bad)
    assert code == 0 and "oracle bisect: A and B are the same command; nothing to bisect" in out
    data = json.loads((tmp_path / "rep" / "bisect.json").read_text())
    assert data["status"] == "nothing-to-bisect" and data["runs"] == [] and data["server_starts"] == 0


def test_secrets_in_a_refused_command_are_not_printed(capsys, tmp_path):
    code, out = bisect(capsys, tmp_path, "--backend", "llamacpp", "--good", "srv --api-key=sk-topsecret-1234$X",
                       "--bad", GOOD)
    assert code == 2 and "sk-topsecret-1234" not in out and "'--api-key=***'" in out and "expand" in out


def test_a_report_dir_that_cannot_be_written_is_refused_before_any_server(capsys, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    code = main(["bisect", "--report-dir", str(blocker / "rep"), "--backend", "llamacpp", "--good", GOOD,
                 "--bad", GOOD + " -x"])
    out = capsys.readouterr().err
    assert code == 2 and f"oracle bisect: --report-dir {blocker / 'rep'}: cannot write there" in out, out
    assert "give --report-dir a folder you can write" in out


def test_an_earlier_bisect_report_or_the_suites_folder_is_never_written_over(capsys, tmp_path):
    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "bisect.json").write_text('{"answer": "earlier"}\n')
    code, out = bisect(capsys, tmp_path, "--backend", "llamacpp", "--good", GOOD, "--bad", GOOD + " -x")
    assert code == 2 and f"--report-dir {tmp_path / 'rep'} holds an earlier report" in out, out
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == ["bisect.json"]
    suite = tmp_path / "rep" / "s.jsonl"
    suite.write_text('{"id": "a", "class": "c", "messages": [{"role": "user", "content": "x"}], "max_tokens": 8}\n')
    (tmp_path / "rep" / "bisect.json").unlink()
    code, out = bisect(capsys, tmp_path, "--backend", "llamacpp", "--good", GOOD, "--bad", GOOD + " -x", "--suite",
                       str(suite))
    assert code == 2 and f"--suite {suite} lies inside --report-dir {tmp_path / 'rep'}" in out, out
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == ["s.jsonl"]
