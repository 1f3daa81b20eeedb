"""`oracle bisect` on the real llama-server with the real SmolLM2-135M: the culprit flag named among harmless ones,
the model file named, nothing to bisect when B gives A's tokens, and an A that is not reproducible refused.

The tiny suite at 32 tokens: with `-ctk q8_0` code-hashmap splits at token 11 on this machine (the other two
prompts stay exact); `-fa on`, `-t 1` and `-ub 32` leave all three exact. The tests that need no split of their own
run one or two prompts at a few tokens (the suite's time budget, docs/architecture.md): every start of a bisect is
a server start and its decoding.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from conftest import launch_line, tiny_rows, write_suite
from oracle.cli import main

pytestmark = pytest.mark.slow

BOOT_FAULT = Path(__file__).resolve().parents[1] / "helpers" / "boot_fault.py"
HARMLESS = "-fa on -t 1 -ub 32"


@pytest.fixture
def bisect(tmp_path, capsys):
    """Run `oracle bisect` on the tiny suite (at 32 tokens unless told); (exit code, stdout + stderr, bisect.json)."""

    def run(good: str, bad: str, *extra: str, max_tokens: int = 32):
        suite = write_suite(tmp_path, "tiny", tiny_rows())
        report = tmp_path / "bisect"
        code = main(["bisect", "--backend", "llamacpp", "--good", good, "--bad", bad, f"--suite={suite}",
                     f"--max-tokens={max_tokens}", f"--report-dir={report}", *extra])
        out = capsys.readouterr()
        data = json.loads((report / "bisect.json").read_text())
        return code, out.out + out.err, data, report

    return run


def test_bisect_names_ctk_q8_0_among_harmless_flags(bisect, llama_tools, model_path):
    good = launch_line(llama_tools, model_path)
    code, out, data, report = bisect(good, launch_line(llama_tools, model_path, f"-ctk q8_0 {HARMLESS}"))
    assert code == 0, out
    n = len(data["diverged"])
    answer = f"culprit: `-ctk q8_0` (alone reproduces {n}/{n} divergences; removing it from B restores {n}/{n} exact)"
    assert data["answer"] == answer and data["culprit"] == ["-ctk q8_0"] and data["status"] == "culprit"
    assert f"oracle bisect: {answer}" in out and n >= 1
    assert [c["label"] for c in data["changes"]] == ["-ctk q8_0", "-fa on", "-t 1", "-ub 32"]
    assert [r["name"] for r in data["runs"]] == ["A run 1", "A run 2", "B"]
    # ddmin: {-ctk, -fa} bad, {-ctk} bad; then B without -ctk q8_0 is good in both of its starts.
    probes = [(p["changes"], p["verdict"], p["role"], len(p["trials"])) for p in data["probes"]]
    assert probes == [(["-ctk q8_0", "-fa on"], "bad", "search", 1), (["-ctk q8_0"], "bad", "search", 1),
                      (["-fa on", "-t 1", "-ub 32"], "good", "verify", 2)]
    assert data["probes"][1]["first_divergence"]["prompt"] in data["diverged"]
    assert "probe 2/32: -ctk q8_0 ... bad (" in out and "probe 3/32: -fa on, -t 1, -ub 32 ... good (" in out
    assert data["server_starts"] == 3 + 1 + 1 + 2
    md, html = (report / "bisect.md").read_text(), (report / "bisect.html").read_text()
    assert md.splitlines()[2] == f"**{answer}**"
    assert md.count("| search |") == 2 and md.count("| verify |") == 1 and "-ctk q8_0 -fa on`" in md
    assert html.count("<tr data-probe=") == 3 and "culprit: `-ctk q8_0`" in html
    assert len(list((report / "servers").glob("*/server-boot1.log"))) == 7


def test_bisect_names_the_model_file(bisect, llama_tools, model_path, q4_0_model):
    code, out, data, _ = bisect(launch_line(llama_tools, model_path), launch_line(llama_tools, q4_0_model),
                                max_tokens=8)  # Q4_0 splits code-palindrome at token 0
    assert code == 0, out
    (label,) = data["culprit"]
    assert label == f"-m {q4_0_model} (was {model_path})"
    assert data["answer"].startswith(f"culprit: `{label}` (alone reproduces")
    assert data["probes"] == []  # the only difference: B itself is the probe, A without it


def test_b_that_reproduces_a_has_nothing_to_bisect(bisect, llama_tools, model_path):
    """Two requests at once (-np 1 queues the second): the same tokens as one at a time."""
    code, out, data, _ = bisect(launch_line(llama_tools, model_path), launch_line(llama_tools, model_path, "-fa on"),
                                "--concurrency=2", max_tokens=8)
    assert code == 0, out
    assert data["concurrency"] == 2 and data["changes"] == [{"kind": "flag", "label": "-fa on"}]
    assert data["answer"] == "B reproduces A; nothing to bisect" and data["status"] == "nothing-to-bisect"
    assert "oracle bisect: B reproduces A; nothing to bisect" in out
    assert data["probes"] == [] and data["diverged"] == [] and len(data["runs"]) == 3


def test_an_a_that_is_not_reproducible_stops_with_exit_2(bisect, llama_tools, model_path, tmp_path):
    """A's launch wraps the server in the fault proxy, which changes token 7 of the first request from its second
    start on: A's two runs differ, so nothing can be bisected against it."""
    inner = launch_line(llama_tools, model_path).replace("{port}", "{inner}")
    wrapper = (f"{shlex.quote(sys.executable)} {shlex.quote(str(BOOT_FAULT))} --state {tmp_path / 'boots'} "
               "--port {port} --position 7 --request-index 1 --from-boot 2 -- ")
    code, out, data, _ = bisect(wrapper + inner, wrapper + inner + " -ctk q8_0", "--prompts=code-palindrome",
                                max_tokens=8)
    assert code == 2, out
    message = ("A is not reproducible (prompt code-palindrome splits at token 7 between two runs); nothing can be "
               "bisected against it")
    assert data["answer"] == message and f"oracle bisect: {message}" in out and data["status"] == "unreproducible"
    assert [r["name"] for r in data["runs"]] == ["A run 1", "A run 2"] and data["probes"] == []


def test_a_server_that_does_not_start_stops_the_bisect_with_its_report(bisect, llama_tools, model_path):
    good = launch_line(llama_tools, model_path)
    code, out, data, report = bisect(good, good + " --no-such-flag-here", "--prompts=code-palindrome", max_tokens=4)
    assert code == 2, out
    assert data["status"] == "interrupted"
    assert data["answer"].startswith("interrupted during B: a server did not start: oracle could not start the target")
    assert data["interruption"].startswith("during B: a server did not start") and "exited with code 1" in data["interruption"]
    assert "invalid argument: --no-such-flag-here" in data["interruption"]
    assert "0 probe(s) finished are in this report" in data["interruption"]
    assert [r["name"] for r in data["runs"]] == ["A run 1", "A run 2"]
    assert "Stopped midway" in (report / "bisect.md").read_text()
