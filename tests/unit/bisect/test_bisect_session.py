"""The bisect's orchestration without a server: server starts replaced by a fake whose tokens depend on the
command's words, so every outcome (culprit, interaction, budget, Ctrl-C, unreproducible A) is planted."""

from __future__ import annotations

import io
import json

import pytest

from oracle.bisect import run_bisect
from oracle.bisect.options import add_parser
from oracle.bisect.probe import ServerRun, ServerStarts
from oracle.store.records import Condition, Record

BASE = "srv -m m.gguf --port {port}"
PROMPTS = ("code-palindrome", "code-hashmap", "math-derivative")


def args(good: str, bad: str, tmp_path, *extra: str):
    import argparse

    sub = argparse.ArgumentParser().add_subparsers(dest="command")
    add_parser(sub)
    return sub.choices["bisect"].parse_args(["--backend", "llamacpp", "--good", good, "--bad", bad,
                                             "--prompts", ",".join(PROMPTS), "--max-tokens", "8",
                                             "--report-dir", str(tmp_path / "rep"), *extra])


@pytest.fixture
def planted(monkeypatch):
    """fake(rule): each start gives tokens 0..7, where rule(command words, start number) -> {prompt: position}
    changes the token at that position; `calls` lists the commands started."""
    calls: list[str] = []

    def install(rule):
        def run(self, name, command, *, only=None, suite=None):
            self.starts += 1
            self.running = name
            calls.append(command)
            changed = rule(command.split(), self.starts)  # may raise, as a start interrupted midway
            self.running = None
            records = {}
            for pid in PROMPTS if only is None else only:
                ids = list(range(8))
                if pid in changed:
                    ids[changed[pid]] += 100
                records[pid] = Record(pid, Condition(boot=self.starts), [1, 2], ids, "length")
            return ServerRun(name, command, records, 0.01, None)

        monkeypatch.setattr(ServerStarts, "run", run)
        return calls

    return install


def run(a: str, b: str, tmp_path, *extra: str) -> tuple[int, str, dict]:
    out = io.StringIO()
    code = run_bisect(args(a, b, tmp_path, *extra), out=out)
    return code, out.getvalue(), json.loads((tmp_path / "rep" / "bisect.json").read_text())


def test_an_interaction_is_named_as_a_set(planted, tmp_path):
    planted(lambda words, start: {"code-hashmap": 3} if "-np" in words and "--ladder" in words else {})
    code, out, data = run(BASE, BASE + " -t 2 -np 4 -ub 8 -fa on --ladder 4 --mlock", tmp_path)
    assert code == 0, out
    assert data["answer"] == ("culprit: `-np 4` together with `--ladder 4` (together reproduce 1/1 divergences; "
                              "removing them from B restores 1/1 exact)")
    assert data["culprit"] == ["-np 4", "--ladder 4"] and data["diverged"] == ["code-hashmap"]
    verify = data["probes"][-1]
    assert verify["role"] == "verify" and verify["changes"] == ["-t 2", "-ub 8", "-fa on", "--mlock"]
    assert verify["verdict"] == "good" and len(verify["trials"]) == 2
    md = (tmp_path / "rep" / "bisect.md").read_text()
    assert md.splitlines()[2] == f"**{data['answer']}**"
    assert "| A run 1 | 3 prompts recorded: the tokens every other run is compared with |" in md
    assert "| B | 2/3 exact; code-hashmap @3 |" in md and "| A run 2 | 3/3 exact |" in md
    searched = [p for p in data["probes"] if p["role"] == "search"]
    assert md.count("| search |") == len(searched) and md.count("| verify |") == 1
    html = (tmp_path / "rep" / "bisect.html").read_text()
    assert html.count("<tr data-probe=") == len(data["probes"]) and "together with" in html


def test_budget_spent_exits_1_with_the_best_set_so_far(planted, tmp_path):
    planted(lambda words, start: {"math-derivative": 5} if "-g" in words else {})
    code, out, data = run(BASE, BASE + " -a 1 -b 1 -c 1 -d 1 -e 1 -f 1 -g 1 -h 1", tmp_path, "--max-probes", "2")
    assert code == 1, out
    assert data["status"] == "budget" and len(data["probes"]) == 2
    assert data["answer"] == ("the budget ran out after 2 probes (--max-probes 2) before a minimal set was proven; "
                              "best set so far: `-e 1` together with `-f 1` together with `-g 1` together with `-h 1`")
    assert "probe 2/2: -e 1, -f 1, -g 1, -h 1 ... bad (math-derivative splits at token 5)" in out


def test_a_probe_is_bad_when_any_trial_diverges(planted, tmp_path):
    """-x diverges only on every third start: its probe's second start catches it."""
    planted(lambda words, start: {"code-palindrome": 1} if "-x" in words and start % 3 == 0 else {})
    code, out, data = run(BASE, BASE + " -x 1 -y 1", tmp_path, "--trials", "3")
    assert code == 0, out  # starts: A 1, A 2, B 3 (diverges), probe {-x}: 4, 5, 6 (diverges)
    assert data["culprit"] == ["-x 1"]
    assert [len(p["trials"]) for p in data["probes"]] == [3, 3]  # {-x} bad at its 3rd start; {-y} good in 3


def test_an_unreproducible_a_stops_before_b(planted, tmp_path):
    calls = planted(lambda words, start: {"code-hashmap": 6} if start == 2 else {})
    code, out, data = run(BASE, BASE + " -x 1", tmp_path)
    assert code == 2 and len(calls) == 2
    assert data["answer"] == ("A is not reproducible (prompt code-hashmap splits at token 6 between two runs); "
                              "nothing can be bisected against it")


def test_ctrl_c_keeps_the_finished_probes(planted, tmp_path):
    def rule(words, start):
        if start == 5:
            raise KeyboardInterrupt
        return {"code-hashmap": 2} if "-b" in words else {}

    calls = planted(rule)
    code, out, data = run(BASE, BASE + " -a 1 -b 1 -c 1", tmp_path)
    assert code == 2 and len(calls) == 3 + 2  # A, A, B, probe 1 {-a, -b} (bad at once), then Ctrl-C in probe 2
    assert data["status"] == "interrupted"
    assert data["answer"] == "interrupted during probe 2 trial 1: interrupted by Ctrl-C"
    assert [p["verdict"] for p in data["probes"]] == ["bad", "unfinished"]
    assert "probe 2/32: -a 1 ... stopped" in out
    assert "1 probe(s) finished" in data["interruption"]
    assert "Stopped midway" in (tmp_path / "rep" / "bisect.md").read_text()
    assert "Stopped midway" in (tmp_path / "rep" / "bisect.html").read_text()


def test_secrets_never_reach_the_report_or_the_terminal(planted, tmp_path):
    planted(lambda words, start: {"code-hashmap": 2} if "-b" in words else {})
    secret = "sk-bisect-secret-value-123"
    code, out, data = run(f"{BASE} --api-key {secret}", f"{BASE} --api-key {secret} -b 1", tmp_path)
    assert code == 0 and data["culprit"] == ["-b 1"]
    for name in ("bisect.json", "bisect.md", "bisect.html"):
        assert secret not in (tmp_path / "rep" / name).read_text()
    assert secret not in out and "--api-key ***" in data["good"]


def test_a_second_cause_is_said_when_b_without_the_culprit_still_diverges(planted, tmp_path):
    planted(lambda words, start: {**({"code-hashmap": 4} if "-a" in words else {}),
                                  **({"math-derivative": 6} if "-b" in words else {})})
    code, out, data = run(BASE, BASE + " -a 1 -b 1", tmp_path)
    assert code == 0, out
    assert data["answer"] == ("culprit: `-a 1` (alone reproduces 1/2 divergences; removing it from B restores 1/2 "
                              "exact: B without it still diverges (math-derivative splits at token 6), so another "
                              "change changes the outputs too; bisect again with --bad set to B without it)")
    assert [(p["changes"], p["verdict"], p["role"]) for p in data["probes"]] == [(["-a 1"], "bad", "search"),
                                                                                (["-b 1"], "bad", "verify")]
