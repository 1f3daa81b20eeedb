"""Interleaved A/B speed on a real llama-server (2 prompts x 24 tokens, ABBA rounds until the sequential test decides):
the same config against itself never passes --min-speedup 1.0 (the sequential test fails it, `same speed` within the
band, or reaches its cap of 4 rounds: inconclusive); two threads against a reference recorded with one pass it
(one server at a time); a candidate slowed by a pacing proxy fails it (both servers up); a reference launch that
cannot start stops the run (exit 2); `recorded` with a reference that kept no launch command is a usage error
(exit 4). The A/A run and the delayed one also measure speed cells (p128/g32 and p256/g1, 3 repeats) interleaved the
same way: the same config's cells get their between-run t intervals, the delayed candidate's decode cell fails
--min-speedup 1.0 too; every sample of both sides kept, each cell's energy metered (or "not available:
<why>", as on a host without RAPL).

The servers of this module run llama-server with one thread (-t 1): on a 2-core host shared with other jobs, the
default two threads wait on each other whenever one is descheduled (measured under a load of ~11: 1.9 tok/s with
two threads, 16 tok/s with one), which would make every pass, and the module, ten times slower."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, gate_argv, gate_env, launch_line, write_suite
from proxy import FaultProxy

from oracle.speed.noise import same_speed
from oracle.store.reference import sealed_manifest

pytestmark = pytest.mark.slow

MAX_TOKENS = 24
SERVER_ARGS = "-t 1"
ROUNDS_MAX = "--speed-rounds-max=4"  # the sequential test's cap here: an undecided A/A stops after 8 passes, not 16
SLOWDOWN = 4  # the proxy paces the candidate's stream to about a quarter of the reference's rate (3 left the 3-repeat
# cell interval of a loaded host straddling 1.0 once: the reference's own rate sank toward the paced one)
CELLS = ("--speed-cells=p128/g32,p256/g1", "--speed-repeats=3")  # small cells: one decode, one cold input
NO_RAPL = ("not available: no /sys/class/powercap (no RAPL energy counters on this host: a VM, or a kernel without "
           "intel_rapl / powercap)")


# Student t quantiles (tables; scipy.stats.t.ppf), two-sided 95%, by degrees of freedom (repeats - 1).
T95 = {2: 4.302653, 3: 3.182446}


def t_interval_of(versus: dict) -> None:
    """(A speed cell's comparison.) The report's 95% interval is Student's t over the paired repeats' log ratios.
    Whether it holds 1.0 for the same config is not asserted: on this loaded 2-core host even a 99.9% interval of
    the same config's cells once excluded 1.0 ([.., 0.981], one-at-a-time, load ~15), the boots and the host's load
    moving between passes; the speed item's A/A answer is the sequential test's, asserted above."""
    logs = np.log(versus["per_round"])
    n = logs.size
    mean, sd = float(logs.mean()), float(logs.std(ddof=1))
    assert versus["t_quantile"] == pytest.approx(T95[n - 1], abs=1e-4)
    half95 = T95[n - 1] * sd / np.sqrt(n)
    assert list(np.exp([mean - half95, mean + half95])) == pytest.approx(versus["ci95"], abs=1e-3), versus


def min_speedup_words(ci95: list[float]) -> tuple[str, str, str]:
    """(verdict, outcome, words) that --min-speedup 1.0 with --allow-inconclusive=speed must give for a 95% interval."""
    lo, hi = ci95
    if hi < 1.0:
        return "fail", "failed", "--min-speedup 1: the whole interval is below it"
    if lo >= 1.0:
        return "pass", "passed", "--min-speedup 1: the whole interval is at or above it"
    return "inconclusive", "passed", "--min-speedup 1: it lies inside the interval (more"


@pytest.fixture(scope="module")
def ab_suite(tmp_path_factory) -> Path:
    rows = [json.loads(line) for line in (REPO / "prompts" / "default.jsonl").read_text().splitlines()[:2]]
    return write_suite(tmp_path_factory.mktemp("ab-suite"), "two", rows)


@pytest.fixture(scope="module")
def launch(llama_tools, model_path) -> str:
    return launch_line(llama_tools, model_path, SERVER_ARGS)


@pytest.fixture(scope="module")
def launched_reference(launch, ab_suite, tmp_path_factory) -> Path:
    """A reference recorded with --launch, so its manifest keeps the command `--reference-launch recorded` starts."""
    folder = tmp_path_factory.mktemp("ab-reference")
    (folder / "pytest.ini").write_text("[pytest]\n")
    ref = folder / "ref"
    cmd = gate_argv("-q", f"--launch={launch}", f"--oracle-suite={ab_suite}", f"--max-tokens={MAX_TOKENS}",
                    "--canaries=none", f"--record={ref}", f"--report-dir={folder / 'rec'}")
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=900, env=gate_env())
    assert done.returncode == 0, done.stdout[-3000:]
    return ref


def post_first_rate(ref: Path) -> float:
    rates = []
    for npz in sorted((ref / "records" / "boot1-c1").glob("*.npz")):
        t = np.load(npz)["token_times_s"]
        rates.append((len(t) - 1) / (t[-1] - t[0]))
    return float(np.median(rates))


def check_of(rep: dict, cid: str) -> dict:
    return next(c for c in rep["checks"] if c["id"] == cid)


def interleaved_cells(rep: dict) -> dict:
    """The cells block, with what holds for every interleaved cell asserted: both sides' 3 samples kept, cold,
    of exact length, unique prefixes across both sides, a between-run comparison, the energy said per side."""
    block = rep["speed"]["cells"]
    assert "interleaved" in block and "vs_reference" not in block, block.keys()
    prefixes = []
    for name, length in (("p128/g32", 128), ("p256/g1", 256)):
        cell = block["cells"][name]
        assert cell["status"] == "measured", cell
        for side in (cell, cell["reference"]):
            assert [s["repeat"] for s in side["samples"]] == [1, 2, 3]
            assert side["cache"]["verdict"] == "pass" and side["short"] == 0
            assert [s["server_prompt_tokens"] for s in side["samples"]] == [length] * 3
            assert side["warmup"]["server_prompt_tokens"] == length
            prefixes += [s["prefix"] for s in side["samples"]]
            energy = side["energy"]
            if Path("/sys/class/powercap").is_dir():
                assert energy["available"] or energy["reason"].startswith("not available: "), energy
            else:
                assert energy == {"available": False, "reason": NO_RAPL, "device": "cpu",
                                  "isolation": energy["isolation"]}, energy
        versus = cell["vs_reference"]
        assert (versus["measured"], versus["interval"], versus["pairs"]) == ("interleaved", "between-run", 3), versus
    assert len(set(prefixes)) == len(prefixes) == 12
    return block


def test_the_plan_prices_the_interleaved_session_and_its_cells_with_this_runs_boot(gate_run, launch, ab_suite,
                                                                                  launched_reference):
    """Issue 53: the plan said "about 5 s in all" for a 6-minute A/A gate. --oracle-plan (after the warm-up, nothing
    more sent) prices the sequential test's expected rounds (3 of at most 4 here) of both sides' passes, a warm-up and
    a server boot per pass one server at a time, at the boot this run just measured, and the cells' repeats alike."""
    result = gate_run(f"--launch={launch}", f"--reference={launched_reference}", "--reference-launch=recorded",
                      ROUNDS_MAX, *CELLS, "--oracle-plan", "--oracle-budget=off", suite=ab_suite,
                      max_tokens=MAX_TOKENS, report="plan")
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines([
        "  interleaved A/B: 18 requests, * generated tokens, ~* (sequential test: ~3 ABBA rounds expected, at most 4 "
        "(up to 1.3x this estimate); reference and candidate each pass; 7 server boot(s) at * s each (this run's "
        "boot))",
        "  speed cells: 24 requests, * ~* (3 repeats and 6 warm-up(s) per cell, on each side (interleaved); 7 server "
        "boot(s) at * s each (this run's boot))",
        "oracle plan: about * in all"])


def test_the_same_config_interleaved_never_passes_the_sequential_test(gate_run, launch, ab_suite,
                                                                        launched_reference, read_report, tmp_path):
    result = gate_run(f"--launch={launch}", f"--reference={launched_reference}", "--reference-launch=recorded",
                      ROUNDS_MAX, "--min-speedup=1.0", "--allow-inconclusive=speed", *CELLS,
                      suite=ab_suite, max_tokens=MAX_TOKENS, report="aa")
    rep = read_report(result.folder)
    card = rep["speed"]
    versus = card["vs_reference"]
    seq = versus["sequential"]
    rounds = seq["rounds"]
    assert (versus["interval"], versus["rounds"], versus["label"]) == ("between-run", rounds, "headline"), versus
    # no real difference: the sequential test fails it (H0 "<= 1.0") or stops undecided at its cap, never passes
    assert seq["decision"] in ("fail", "inconclusive") and 2 <= rounds <= 4, seq
    assert [p["round"] for p in seq["path"]] == list(range(2, rounds + 1)) and seq["bounds"] == [-3.6636, 3.6636]  # split: two spreads
    cells = interleaved_cells(rep)
    for name in ("p128/g32", "p256/g1"):
        t_interval_of(cells["cells"][name]["vs_reference"])
    expected = {"fail": ("fail", "failed"), "inconclusive": ("inconclusive", "passed")}[seq["decision"]]
    expected_cells = min_speedup_words(cells["cells"]["p128/g32"]["vs_reference"]["ci95"])
    assert result.ret == (1 if "fail" in (expected[0], expected_cells[0]) else 0), result.stdout.str()[-3000:]
    assert versus["launch"] == "matched" and versus["figure"] == "after_ttft_tok_s"
    block = card["interleave"]
    assert block["order"] == ["ab: AB", "ab: BA", "ab: AB", "ab: BA"][:rounds] and block["servers"] == "one-at-a-time"
    assert (block["design"], block["rounds_max"]) == ("sequential", 4)
    passes = block["passes"]
    assert [p["side"] for p in passes] == (["reference", "candidate", "candidate", "reference"] * 2)[:2 * rounds]
    # each pass on its own boot: boots 1..rounds of each side, every pass cold and credible
    assert sorted(p["boot"] for p in passes if p["side"] == "reference") == list(range(1, rounds + 1))
    assert all(p["cache"] == "pass" and p["credible"] and len(p["rates"]) == 2 for p in passes), passes
    assert card["vs_recorded_reference"]["interval"] == "within-run"
    speed = check_of(rep, "speed")
    assert (speed["verdict"], speed["outcome"]) == expected, speed
    said, words = "rounds interleaved, headline); --min-speedup 1: ", f"sequential test: {seq['decision']} after {rounds}"
    if seq["decision"] == "fail" and same_speed(versus["median"], versus["noise"]):
        # a failed test whose point lies inside the band says so first: "same speed (within the measured noise ...)"
        assert f"{said}same speed (within the measured noise +-" in speed["detail"], speed["detail"]
        assert f"); {words}" in speed["detail"], speed["detail"]
    else:
        assert f"{said}{words}" in speed["detail"], speed["detail"]
    assert check_of(rep, "speed-ab")["verdict"] == "info"
    md = (result.folder / "identity.md").read_text()
    assert "## Interleaved A/B speed (speed-ab)" in md and "Against the reference, interleaved in this session:" in md
    assert "Against the recorded reference (reference measured in another run): " in md
    md = (result.folder / "identity.md").read_text()
    assert "- LLR by round: r2 " in md and "pass-to-pass spread" in md
    # one-at-a-time: round after round, each pass on a fresh boot of its side, ABBA
    assert [x.split(" boot")[0] for x in cells["interleaved"]["order"]] == [
        "r1 reference", "r1 candidate", "r2 candidate", "r2 reference", "r3 reference", "r3 candidate"]
    check = check_of(rep, "speed-cells")
    assert (check["verdict"], check["outcome"]) == expected_cells[:2], check
    assert "p128/g32 " in check["detail"] and f"the headline decode cell; {expected_cells[2]}" in check["detail"]
    assert "(interleaved, between-run, " in md and "p128/g32 (reference): " in md

    # `recorded` needs a recorded command: a reference of a --oracle-url server has none (refused before any server)
    bare = tmp_path / "bare"
    shutil.copytree(launched_reference, bare)
    manifest = json.loads((bare / "manifest.json").read_text())
    manifest["identity"]["launch_command"] = None
    (bare / "manifest.json").write_bytes(sealed_manifest(manifest))
    refused = gate_run(f"--launch={launch}", f"--reference={bare}", "--reference-launch=recorded", suite=ab_suite,
                       max_tokens=MAX_TOKENS, report="bare")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--reference-launch recorded: the reference * keeps no launch command*give the "
                                  "reference server's command: --reference-launch CMD*"])


def test_two_threads_against_a_reference_recorded_with_one_pass_the_sequential_test(gate_run, llama_tools, model_path,
                                                                                    ab_suite, launched_reference,
                                                                                    read_report):
    """The real speed-up of a config change, one server up at a time: the sequential test stops when it is clear (on
    a quiet host after 2 or 3 rounds; a clear speed-up needs a third round where two disagree, docs/speed.md).

    Two threads are faster only where two cores are free: on this project's 2-core host at a load average of ~24 the
    -t 2 server made 0.4-0.5 tok/s against 17-33 tok/s for -t 1 (its threads wait on each other whenever one is
    descheduled), and each of its passes took ~2.5 minutes. On such a host the test says so and skips."""
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > cores - 1:
        pytest.skip(f"two threads need two free cores: load average {load:.1f} on {cores} cores (measured here: -t 2 "
                    "at 0.4 tok/s against -t 1 at 17 tok/s)")
    # the default cap of 8 rounds, not the module's 4: here two threads are only ~8% faster (1.083x [1.051, 1.115] on
    # a quiet host, LLR 1.07, 2.83, 4.31 by round: a pass at round 4, the module's cap), and a noisier round must not
    # turn that into `inconclusive`
    result = gate_run(f"--launch={launch_line(llama_tools, model_path, '-t 2')}", f"--reference={launched_reference}",
                      "--reference-launch=recorded", "--min-speedup=1.0", suite=ab_suite,
                      max_tokens=MAX_TOKENS, report="threads")
    rep = read_report(result.folder)
    versus = rep["speed"]["vs_reference"]
    seq = versus["sequential"]
    print(f"\n-t 2 against -t 1: {versus['median']:.3f}x {versus['ci95']}, sequential {seq['decision']} after "
          f"{seq['rounds']} rounds, LLR path {[p['llr'] for p in seq['path']]}")
    assert versus["launch"].startswith("matched_except: ") and "-t 2" in versus["launch"], versus["launch"]
    speed = check_of(rep, "speed")
    assert (speed["verdict"], seq["decision"]) == ("pass", "pass"), speed
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert f"sequential test: pass after {seq['rounds']} rounds (LLR " in speed["detail"]
    assert len(rep["speed"]["interleave"]["passes"]) == 2 * seq["rounds"]


def test_a_delayed_candidate_fails_min_speedup_on_the_interleaved_comparison(gate_run, llama_server, ab_suite,
                                                                              launched_reference, read_report):
    pace_s = SLOWDOWN / post_first_rate(launched_reference)
    upstream = llama_server(SERVER_ARGS)  # the reference's config, behind a proxy that paces its stream
    with FaultProxy(upstream.url, pace_s=pace_s) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", f"--reference={launched_reference}", "--reference-launch=recorded",
                          "--interleave-servers=both-up", ROUNDS_MAX,
                          "--min-speedup=1.0", *CELLS, suite=ab_suite, max_tokens=MAX_TOKENS, report="slow")
    rep = read_report(result.folder)
    assert result.ret == 1, result.stdout.str()[-3000:]
    speed = check_of(rep, "speed")
    assert (speed["verdict"], speed["outcome"]) == ("fail", "failed"), speed
    seq = speed["evidence"]["sequential"]
    assert speed["evidence"]["interval"] == "between-run" and seq["decision"] == "fail", speed
    assert "x slower [" in speed["detail"] and f"--min-speedup 1: sequential test: fail after {seq['rounds']} rounds" \
        in speed["detail"] and "same speed" not in speed["detail"]
    block = rep["speed"]["interleave"]
    assert block["servers"] == "both-up" and len(block["passes"]) == 2 * seq["rounds"] and block["control"] is None
    assert all(p["boot"] is None for p in block["passes"] if p["side"] == "candidate")  # a --oracle-url server: not booted
    assert rep["summary"]["exact"] == [2, 2]  # identical and slower: the tokens pass, the speed fails
    cells = interleaved_cells(rep)
    decode = cells["cells"]["p128/g32"]["vs_reference"]
    assert decode["label"] == "headline" and decode["ci95"][1] < 1.0, decode
    # both-up: cell after cell, the repeats alternating A B, B A, A B
    assert cells["interleaved"]["order"][:6] == ["r1 reference: p128/g32", "r1 candidate: p128/g32",
                                                 "r2 candidate: p128/g32", "r2 reference: p128/g32",
                                                 "r3 reference: p128/g32", "r3 candidate: p128/g32"]
    check = check_of(rep, "speed-cells")
    assert (check["verdict"], check["outcome"]) == ("fail", "failed"), check
    assert "p128/g32 0." in check["detail"] and "x slower [" in check["detail"]
    assert "the headline decode cell; --min-speedup 1: the whole interval is below it" in check["detail"]
    # the A/A control (--speed-control) runs in benchmarks/aa_control.py's smoke size (tests/servers/test_benchmarks.py)


def test_a_reference_launch_that_cannot_start_stops_the_run(gate_run, shared_server, ab_suite, launched_reference,
                                                           read_report):
    result = gate_run(f"--oracle-url={shared_server.url}", f"--reference={launched_reference}",
                      "--reference-launch=exit 3 # {port}", "--interleave-servers=both-up", "--speed-rounds=2",
                      suite=ab_suite, max_tokens=MAX_TOKENS, report="no-start")
    rep = read_report(result.folder)
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()[-3000:]
    ab = check_of(rep, "speed-ab")
    assert ab["verdict"] == "not-run"
    assert "the reference server (--reference-launch) did not start" in rep["interruption"]
    assert "exited with code 3 before it was healthy" in rep["interruption"]
    result.stdout.fnmatch_lines(["*the run stopped midway: speed-ab: the reference server (--reference-launch) did not "
                                 "start*"])
