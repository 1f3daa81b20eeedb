"""The speed card and the speed item on a real llama-server: a planted slowdown is measured and fails the
item, n-gram speculation is diagnostic (its comparison labelled `matched_except_speculation`), a reference without
token times is not comparable, the plain server's timestamps are credible and a buffering proxy's are not."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, gate_argv, gate_env, launch_line, write_suite
from proxy import FaultProxy

from oracle.speed.credible import MIN_SPREAD, RATE_TOLERANCE
from oracle.store.reference import sealed_manifest

pytestmark = pytest.mark.slow

MAX_TOKENS = 104  # >= 101: every prompt gets a conventional rate
TARGET_RATIO = 0.7  # the planted delay slows the candidate to this share of the reference's median rate


def speed_rows() -> list[dict]:
    """The default suite's prompts that run past 101 tokens (the short tool-summary one left out): eleven, so that
    one request stalled by a busy machine cannot swing the bootstrap interval of the median."""
    rows = [json.loads(line) for line in (REPO / "prompts" / "default.jsonl").read_text().splitlines()]
    return [r for r in rows if r["id"] != "tool-summary"]


@pytest.fixture(scope="module")
def speed_suite(tmp_path_factory) -> Path:
    return write_suite(tmp_path_factory.mktemp("speed-suite"), "speed", speed_rows())


@pytest.fixture(scope="module")
def speed_reference(shared_server, speed_suite, tmp_path_factory) -> Path:
    """A headline reference: eleven prompts x 104 tokens, warmed up, cache-zero proven, on the shared server."""
    folder = tmp_path_factory.mktemp("speed-reference")
    (folder / "pytest.ini").write_text("[pytest]\n")
    ref = folder / "ref"
    cmd = gate_argv("-q", f"--oracle-url={shared_server.url}", f"--oracle-suite={speed_suite}", f"--max-tokens={MAX_TOKENS}",
                    "--canaries=none", f"--record={ref}", f"--report-dir={folder / 'rec'}")
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=600, env=gate_env())
    assert done.returncode == 0, done.stdout[-3000:]
    card = json.loads((folder / "rec" / "identity.json").read_text())["speed"]
    assert card["label"] == "headline", card["reasons"]
    return ref


@pytest.fixture(scope="module")
def launched_reference(speed_reference, llama_tools, model_path, tmp_path_factory) -> Path:
    """The speed reference with the launch command the shared server runs (the embedded command, written as a
    --launch line) in its identity, as a reference recorded with --launch keeps it: what the launch label reads."""
    ref = tmp_path_factory.mktemp("launched-reference") / "ref"
    shutil.copytree(speed_reference, ref)
    manifest = json.loads((ref / "manifest.json").read_text())
    manifest["identity"]["launch_command"] = launch_line(llama_tools, model_path)
    (ref / "manifest.json").write_bytes(sealed_manifest(manifest))
    return ref


def reference_median(ref: Path) -> float:
    rates = []
    for npz in sorted((ref / "records" / "boot1-c1").glob("*.npz")):
        t = np.load(npz)["token_times_s"]
        rates.append(99 / (t[99] - t[0]))
    return float(np.median(rates))


def speed_check(rep: dict) -> dict:
    return next(c for c in rep["checks"] if c["id"] == "speed")


def test_a_planted_delay_is_measured_and_fails_the_speed_item(gate_run, shared_server, speed_suite, speed_reference,
                                                               read_report):
    pace_s = 1 / (TARGET_RATIO * reference_median(speed_reference))
    predicted = 1 / pace_s  # the proxy releases pieces pace_s apart; the server alone is faster
    with FaultProxy(shared_server.url, pace_s=pace_s) as proxy:
        slow = gate_run(f"--oracle-url={proxy.url}", f"--reference={speed_reference}", "--min-speedup=1.0",
                        suite=speed_suite, max_tokens=MAX_TOKENS, report="slow")
        rep = read_report(slow.folder)
        assert slow.ret == 1
        slow.assert_outcomes(passed=13, failed=1)
        card = rep["speed"]
        measured = card["summary"]["conventional_tok_s"]["median"]
        assert abs(measured - predicted) / predicted < 0.15, (measured, predicted)
        check = speed_check(rep)
        assert (check["verdict"], check["outcome"]) == ("fail", "failed")
        assert check["evidence"]["ci95"][1] < 1.0 and check["evidence"]["label"] == "headline"
        assert "x slower [" in check["detail"] and "--min-speedup 1: the whole interval is below it" in check["detail"]
        assert rep["summary"]["exact"] == [11, 11]  # identical and slower: the tokens pass, the speed fails

        ok = gate_run(f"--oracle-url={proxy.url}", f"--reference={speed_reference}", "--min-speedup=0.5",
                      suite=speed_suite, max_tokens=MAX_TOKENS, report="slow-ok")
    rep = read_report(ok.folder)
    assert ok.ret == 0, ok.stdout.str()[-2000:]
    check = speed_check(rep)
    assert (check["verdict"], check["outcome"]) == ("pass", "passed") and check["evidence"]["ci95"][0] >= 0.5
    md = (ok.folder / "identity.md").read_text()
    assert md.startswith("# oracle gate: PASS: 11/11 exact · 0.") and "x slower [" in md.splitlines()[0]
    assert "11 prompts, headline)" in md.splitlines()[0]


def test_ngram_speculation_is_diagnostic_and_the_speed_item_inconclusive(gate_run, llama_tools, model_path,
                                                                         speed_suite, launched_reference, read_report):
    launch = launch_line(llama_tools, model_path, "--spec-type ngram-simple")
    args = (f"--launch={launch}", f"--reference={launched_reference}", "--min-speedup=0.5", "--speculative")
    strict = gate_run(*args, suite=speed_suite, max_tokens=MAX_TOKENS, report="ngram")
    rep = read_report(strict.folder)
    assert strict.ret == 1
    card = rep["speed"]
    assert card["label"] == "diagnostic"
    assert card["reasons"][0].startswith("history-based speculation (ngram-simple in the launch command)")
    check = speed_check(rep)
    assert (check["verdict"], check["outcome"]) == ("inconclusive", "failed")
    assert check["detail"].startswith("speed comparison diagnostic: candidate: history-based speculation")
    # the comparison says what reference and candidate held equal: everything but the speculation
    assert card["vs_reference"]["launch"] == "matched_except_speculation: --spec-type ngram-simple"
    assert "- launch: matched_except_speculation: --spec-type ngram-simple" in (strict.folder / "identity.md").read_text()
    assert card["credible"]["verdict"] == "credible", card["credible"]  # several tokens an event is still a stream

    allowed = gate_run(*args, "--allow-inconclusive=speed", suite=speed_suite, max_tokens=MAX_TOKENS,
                       report="ngram-allowed")
    rep = read_report(allowed.folder)
    assert allowed.ret == 0, allowed.stdout.str()[-2000:]
    assert (speed_check(rep)["verdict"], speed_check(rep)["outcome"]) == ("inconclusive", "passed")


def test_a_reference_without_token_times_is_not_comparable(gate_run, shared_server, speed_suite, speed_reference,
                                                           tmp_path, read_report):
    ref = tmp_path / "no-times"
    shutil.copytree(speed_reference, ref)
    manifest = json.loads((ref / "manifest.json").read_text())
    for npz in (ref / "records" / "boot1-c1").glob("*.npz"):
        arrays = dict(np.load(npz))
        arrays["token_times_s"] = np.zeros(0)
        with open(npz, "wb") as f:
            np.savez(f, **arrays)
        rel = str(npz.relative_to(ref))
        import hashlib
        manifest["files"][rel] = hashlib.sha256(npz.read_bytes()).hexdigest()
    (ref / "manifest.json").write_bytes(sealed_manifest(manifest))  # as a reference written without times
    result = gate_run(f"--oracle-url={shared_server.url}", f"--reference={ref}", "--min-speedup=1.0", suite=speed_suite,
                      max_tokens=MAX_TOKENS, report="no-times")
    rep = read_report(result.folder)
    assert result.ret == 1
    assert result.parseoutcomes() == {"passed": 13, "inconclusive": 1}
    versus = rep["speed"]["vs_reference"]
    assert versus["label"] == "not comparable" and versus["median"] is None
    assert versus["reasons"][0].startswith("the reference holds no token times")
    check = speed_check(rep)
    assert (check["verdict"], check["outcome"]) == ("inconclusive", "failed")
    assert check["detail"].startswith("speed comparison not comparable: the reference holds no token times")


def test_the_plain_servers_timestamps_are_credible(speed_reference):
    """The reference's own record run, straight to the server: a stream, the server's timings agree, its
    generated-token counter moved by exactly the tokens received."""
    rep = json.loads((speed_reference.parent / "rec" / "identity.json").read_text())
    block = rep["speed"]["credible"]
    assert block["verdict"] == "credible" and block["reasons"] == [] and block["not_checked"] == [], block
    assert block["stream"]["judged"] == 11 and block["stream"]["lowest_spread"] >= 3 * MIN_SPREAD  # with margin
    assert block["timings"]["judged"] == 11 and block["timings"]["highest_ratio"] <= 1 + RATE_TOLERANCE
    assert block["counters"]["generated"] == block["counters"]["received"] == 11 * MAX_TOKENS
    manifest = json.loads((speed_reference / "manifest.json").read_text())
    assert manifest["speed"]["credible"]["counters"] == block["counters"]  # kept for the reference's card


def test_a_burst_delivering_proxy_makes_the_card_not_credible(gate_run, shared_server, speed_suite, speed_reference,
                                                              read_report):
    """A buffering reverse proxy delivers each completion at once: the client's clock would read it as hundreds of
    times faster. The card says `not credible` and why, and --min-speedup is inconclusive (exit 1), not passed."""
    with FaultProxy(shared_server.url, burst=True) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", f"--reference={speed_reference}", "--min-speedup=1.0",
                          "-k", "speed or code-palindrome or math-word or writing-story",
                          suite=speed_suite, max_tokens=MAX_TOKENS, report="burst")
    rep = read_report(result.folder)
    assert result.ret == 1
    assert result.parseoutcomes()["inconclusive"] == 1 and "failed" not in result.parseoutcomes()
    card = rep["speed"]
    assert card["label"] == "not credible"
    block = card["credible"]
    assert block["stream"]["judged"] == 3 and block["stream"]["lowest_spread"] < MIN_SPREAD / 10
    assert block["reasons"][0].startswith("burst delivery: 3 of 3 completion(s) arrived within less than 10%")
    assert block["reasons"][1].startswith("the server's own timings contradict the client's clock: 3 of 3")
    assert block["counters"]["contradicts"] is False  # the server did generate them: the clock is what lies
    versus = card["vs_reference"]
    assert versus["label"] == "not credible" and versus["median"] is None and versus["ci95"] is None
    check = speed_check(rep)
    assert (check["verdict"], check["outcome"]) == ("inconclusive", "failed")
    assert check["detail"].startswith("speed comparison not credible: candidate: burst delivery")
    first = (result.folder / "identity.md").read_text().splitlines()[0]
    assert "speed not credible (candidate: burst delivery" in first and "faster" not in first, first
