"""The ledger on real runs of the embedded llama-server (the tiny suite, 3 prompts x 24 tokens, no canaries):

- record, gate the same configuration (pass), gate with `--server-args=-ctk q8_0` (fail): every run appended to
  the default ledger beside the report folders; `oracle history` names the first failing run and the flag,
  prints the `oracle bisect` line and exits 1; history.html in real Chromium shows both plots, labelled;
- #52: a failing report edited to pass is refused by `oracle ledger add` (its seal, or its verdicts re-derived
  from its records, name the file or the field), by `oracle diff` and `oracle html`; `oracle history --audit`
  re-derives every row (0 clean, 1 for a report edited after it was added); a report whose reference is not at
  hand is added and shown as unverified;
- the same reference gated with an environment variable set (LLAMA_ARG_CACHE_TYPE_K=q8_0, which llama-server
  reads): history names the variable;
- a ledger that cannot be written (a wrong password on a real PostgreSQL server, a server that is down, a full
  disk) leaves the gate's verdict, exit code and report as they were, and the report and the terminal say why.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from browser import headless_chromium, png_distinct_bytes
from conftest import NO_WARMUP, gate_argv, gate_env, oracle_cli, tiny_rows, write_suite
from forged_report import forge
from postgres import free_port

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
TINY = ("--max-tokens=24", "--canaries=none", *NO_WARMUP)


def _gate(folder: Path, *args: str, env: dict | None = None, fsize: int | None = None) -> tuple[int, str]:
    def limit():  # a real full disk for files past the limit: write() fails with EFBIG
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    done = subprocess.run(gate_argv("--rootdir", str(folder), f"--oracle-suite={folder / 'tiny.jsonl'}", *TINY, *args),
                          cwd=folder, capture_output=True, text=True, timeout=600, env={**gate_env(), **(env or {})},
                          preexec_fn=limit if fsize else None)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module")
def sequence(tmp_path_factory) -> Path:
    """record -> gate the same (pass) -> gate with -ctk q8_0 (fail), each its own process on the embedded server,
    each appending to the default ledger reports/ledger.sqlite."""
    folder = tmp_path_factory.mktemp("ledger-sequence")
    (folder / "pytest.ini").write_text("[pytest]\n")
    write_suite(folder, "tiny", tiny_rows())
    for name, args, want in (("1-record", ["--record=ref"], 0), ("2-same", ["--reference=ref"], 0),
                             ("3-ctk", ["--reference=ref", "--server-args=-ctk q8_0"], 1)):
        code, out = _gate(folder, *args, f"--report-dir=reports/{name}")
        assert code == want, out[-3000:]
        assert "not appended to the ledger" not in out  # appended: nothing to say
    return folder


def test_history_names_the_first_fail_and_the_flag_that_changed(sequence):
    assert (sequence / "reports" / "ledger.sqlite").is_file()  # the default: beside the report folders
    code, out = oracle_cli(sequence, "history")
    assert code == 1, out
    reports = sequence / "reports"
    assert f"first fail: " in out and f"(fail) {reports / '3-ctk'}" in out
    assert f"{reports / '2-same'}\n" in out.split("last pass:")[1]
    assert "flag: -ctk q8_0" in out and "flag: server_args: None -> -ctk q8_0" in out
    bisect = next(line for line in out.splitlines() if "bisect the launch differences:" in line)
    assert "oracle bisect --backend llamacpp --good 'exec " in bisect and bisect.endswith("--no-repack -ctk q8_0'")
    assert "1 of 1 config(s) fail in their latest run" in out and f"oracle history: reports/history.html" in out
    table = out.split("verdict changed")[0]
    assert [w for line in table.splitlines() for w in ("record", "gate") if f" {w} " in line] == ["record", "gate",
                                                                                                  "gate"]
    page = (reports / "history.html").read_text()
    assert str(reports / "3-ctk") in page and "flag: -ctk q8_0" in page and page.count("<svg") == 2
    code, out = oracle_cli(sequence, "history", "--check")
    assert code == 0 and "3 run(s), 0 missing or changed" in out


def test_history_page_in_chromium_shows_the_plots_labelled(sequence, tmp_path):
    page = sequence / "reports" / "history.html"
    if not page.exists():
        assert oracle_cli(sequence, "history")[0] == 1
    with headless_chromium() as browser:
        browser.get(page.resolve().as_uri())
        figures = browser.execute_script(
            "return [...document.querySelectorAll('figure svg')].map(s => ({w: s.getBoundingClientRect().width,"
            " h: s.getBoundingClientRect().height, text: [...s.querySelectorAll('text')].map(t => t.textContent)}))")
        change = browser.execute_script("return document.querySelector('.change pre').textContent")
        png = browser.get_screenshot_as_png()
    (tmp_path / "history.png").write_bytes(png)
    assert len(figures) == 2 and all(f["w"] > 200 and f["h"] > 100 for f in figures), figures
    strip, speed = (set(f["text"]) for f in figures)
    assert {"per-prompt verdict by run (number: first split position)", "run (UTC start)", "code-hashmap",
            "code-palindrome", "math-derivative", "exact", "recorded", "near-tie"} <= strip, strip
    assert any(t.startswith("speed over time (") for t in speed) and {"tok/s", "median over prompts",
                                                                      "run (UTC start)"} <= speed, speed
    assert "flag: -ctk q8_0" in change and "3-ctk" in change
    assert png_distinct_bytes(png) > 50  # drawn, not blank


def test_history_names_a_changed_environment_variable(sequence):
    """The same reference gated with LLAMA_ARG_CACHE_TYPE_K=q8_0 in the environment (llama-server reads it; the
    identity records LLAMA_* variables), into a ledger of its own with the first two runs imported."""
    ledger = sequence / "env-ledger.sqlite"
    code, out = oracle_cli(sequence, "ledger", "add", "reports/1-record", "reports/2-same", "--ledger", str(ledger))
    assert code == 0 and "2 run(s) added" in out
    code, out = _gate(sequence, "--reference=ref", "--report-dir=env/4-env", f"--ledger={ledger}",
                      env={"LLAMA_ARG_CACHE_TYPE_K": "q8_0"})
    assert code == 1, out[-3000:]
    code, out = oracle_cli(sequence, "history", "--ledger", str(ledger))
    assert code == 1, out
    assert f"(fail) {sequence / 'env' / '4-env'}" in out
    assert "environment variable: environment.LLAMA_ARG_CACHE_TYPE_K: absent -> q8_0" in out
    assert "flag:" not in out and "bisect the launch differences" not in out  # the launch command is the same


def _copy(sequence: Path, name: str, to: Path) -> Path:
    shutil.copytree(sequence / "reports" / name, to)
    return to


_EXACT_FORGED = re.compile(r"tokens\[[\w-]+\]: field verdict is 'exact', but its record against the reference gives "
                           r"'(near-tie|divergent)'")


def test_a_failing_report_edited_to_pass_is_refused_naming_the_field(sequence, tmp_path):
    """#52's example: the -ctk q8_0 gate failed; its folder copied and identity.json edited to pass (verdict,
    summary, every item), the records untouched. Edited as it was, its seal names identity.json; given a matching
    seal hash (a careful forger), the verdicts re-derived from its records name the prompt and the field. Nothing is
    added; `oracle diff` and `oracle html` refuse it too (exit 2)."""
    plain = _copy(sequence, "3-ctk", tmp_path / "plain")
    careful = _copy(sequence, "3-ctk", tmp_path / "careful")
    forge(plain, reseal_it=False)
    forge(careful, reseal_it=True)
    ledger = tmp_path / "ledger.sqlite"
    code, out = oracle_cli(sequence, "ledger", "add", str(plain), "--ledger", str(ledger))
    assert code == 2, out
    assert f"{plain / 'identity.json'}: edited after the run" in out and "nothing was added" in out
    code, out = oracle_cli(sequence, "ledger", "add", str(careful), "--ledger", str(ledger))
    assert code == 2 and _EXACT_FORGED.search(out), out
    assert not ledger.exists()  # refused before the ledger was opened
    code, out = oracle_cli(sequence, "diff", str(careful), "reports/2-same")
    assert code == 2 and _EXACT_FORGED.search(out), out
    code, out = oracle_cli(sequence, "html", str(plain))
    assert code == 2 and "edited after the run" in out, out
    # A record changed, identity.json untouched: the seal names the record.
    record = _copy(sequence, "2-same", tmp_path / "record")
    npz = sorted((record / "records" / "boot1-c1").glob("*.npz"))[0]
    npz.write_bytes(npz.read_bytes() + b"\0")
    code, out = oracle_cli(sequence, "ledger", "add", str(record), "--ledger", str(ledger))
    assert code == 2 and f"{npz}: changed after the run" in out, out


def test_history_audit_re_derives_every_row(sequence, tmp_path):
    """The runs as they were appended audit clean (exit 0: each re-derived against its reference); a report edited
    after it was added is flagged by --audit (exit 1, naming the field) and by --check."""
    code, out = oracle_cli(sequence, "history", "--audit")
    assert code == 0, out
    assert [line.split()[0] for line in out.splitlines()[:-1]] == ["verified"] * 3, out
    assert "3 run(s), 0 fail their audit, 0 unverified" in out
    code, out = oracle_cli(sequence, "history")
    assert "(unverified)" not in out, out
    ledger = tmp_path / "ledger.sqlite"
    later = _copy(sequence, "3-ctk", tmp_path / "later")
    code, out = oracle_cli(sequence, "ledger", "add", str(later), "--ledger", str(ledger))
    assert code == 0 and "1 run(s) added" in out and "unverified" not in out, out
    assert oracle_cli(sequence, "history", "--audit", "--ledger", str(ledger))[0] == 0
    forge(later, reseal_it=True)
    code, out = oracle_cli(sequence, "history", "--audit", "--ledger", str(ledger))
    assert code == 1 and _EXACT_FORGED.search(out) and "1 run(s), 1 fail their audit" in out, out
    code, out = oracle_cli(sequence, "history", "--check", "--ledger", str(ledger))
    assert code == 1 and "changed" in out, out
    code, out = oracle_cli(sequence, "history", "--audit", "--check", "--ledger", str(ledger))
    assert code == 2 and "give one of them" in out, out


def test_a_report_whose_reference_is_not_at_hand_is_unverified(sequence, tmp_path):
    """The reference moved away: the passing gate's report is added as unverified, and history shows it so, never
    as a plain pass; --audit keeps it unverified (not a failure)."""
    away = sequence / "ref.away"
    (sequence / "ref").rename(away)
    try:
        ledger = tmp_path / "ledger.sqlite"
        report = _copy(sequence, "2-same", tmp_path / "same")
        code, out = oracle_cli(sequence, "ledger", "add", str(report), "--ledger", str(ledger))
        assert code == 0 and f"{report}: unverified: its reference is not at hand" in out, out
        code, out = oracle_cli(sequence, "history", "--ledger", str(ledger))
        assert code == 0 and "pass (unverified)" in out and "latest: pass (unverified)" in out, out
        code, out = oracle_cli(sequence, "history", "--audit", "--ledger", str(ledger))
        assert code == 0 and "1 run(s), 0 fail their audit, 1 unverified" in out, out
    finally:
        away.rename(sequence / "ref")


def _all_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()
                     and p.suffix in (".json", ".md", ".html", ".log", ".jsonl", ".txt"))


@pytest.mark.parametrize("fault", ["wrong password", "server down"])
def test_an_unreachable_shared_ledger_costs_the_run_nothing(fault, postgresql, shared_server, shared_reference,
                                                             tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    write_suite(tmp_path, "tiny", tiny_rows())
    password = "wrong-" + postgresql.password if fault == "wrong password" else postgresql.password
    port = postgresql.port if fault == "wrong password" else free_port()
    url = f"postgresql://oracle:{password}@127.0.0.1:{port}/postgres"
    code, out = _gate(tmp_path, f"--oracle-url={shared_server.url}", f"--reference={shared_reference}",
                      "--max-tokens=32", "--report-dir=report", f"--ledger={url}")
    assert code == 0, out[-3000:]  # the verdict stands
    report = json.loads((tmp_path / "report" / "identity.json").read_text())
    assert report["verdict"] == "pass"
    shown = f"postgresql://oracle:***@127.0.0.1:{port}/postgres"
    why = ('password authentication failed for user "oracle"' if fault == "wrong password"
           else "connection")
    note = next(n for n in report["notes"] if "ledger" in n)
    assert note.startswith(f"the run was not appended to the ledger: the ledger {shown} could not be opened (")
    assert why in note and "the verdict and this report stand; add it later with `oracle ledger add report`" in note
    assert f"oracle: {note}" in out.replace("\n", " ") or note[:80] in out
    assert password not in out and password not in _all_text(tmp_path)


def test_a_full_disk_under_the_ledger_costs_the_run_nothing(shared_server, shared_reference, tmp_path):
    """The ledger file is already past the process's file-size limit, so SQLite's next page fails with EFBIG
    (a real failed write, as on a full disk) while the report's own files stay under it."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    write_suite(tmp_path, "tiny", tiny_rows())
    ledger = tmp_path / "full" / "ledger.sqlite"
    examples = sorted(str(p.parent) for p in (REPO / "examples").rglob("identity.json"))
    assert oracle_cli(tmp_path, "ledger", "add", *examples, "--ledger", str(ledger))[0] == 0
    size = ledger.stat().st_size
    code, out = _gate(tmp_path, f"--oracle-url={shared_server.url}", f"--reference={shared_reference}", "--max-tokens=32",
                      "--report-dir=report", f"--ledger={ledger}", fsize=size)
    assert code == 0, out[-3000:]
    report = json.loads((tmp_path / "report" / "identity.json").read_text())
    assert report["verdict"] == "pass" and (tmp_path / "report" / "identity.html").is_file()
    note = next(n for n in report["notes"] if "ledger" in n)
    assert note.startswith(f"the run was not appended to the ledger: the ledger {ledger} could not be written (")
    assert "full" in note.lower() or "disk" in note.lower() or "large" in note.lower(), note
    assert "oracle: the run was not appended to the ledger" in out
    code, out = oracle_cli(tmp_path, "ledger", "add", "report", "--ledger", str(ledger))
    assert code == 0 and "1 run(s) added" in out  # the way back the note names
