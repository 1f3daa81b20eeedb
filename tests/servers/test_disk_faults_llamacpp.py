"""Disk and reference faults against a real llama-server: two runs recording into one folder, a stale lock, a
write that fails midway (a real EFBIG from a file-size limit), an edited manifest, an older unsealed reference."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import NO_WARMUP, gate_argv, gate_env, tiny_rows, write_suite
from proxy import FaultProxy

pytestmark = pytest.mark.slow


def gate_process(tmp_path: Path, *args: str, fsize: int | None = None) -> subprocess.Popen:
    """The gate as its own process (a lock is held per process; a file-size limit applies to it alone)."""
    cmd = gate_argv("--canaries=none", "--rootdir", str(tmp_path), *args)

    def limit():  # a real failed write: past the limit write() fails with EFBIG (SIGXFSZ ignored, as a shell may)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=gate_env(), preexec_fn=limit if fsize else None)


def test_a_second_run_recording_into_the_same_folder_is_refused(shared_server, tmp_path):
    suite = write_suite(tmp_path, "tiny", tiny_rows())
    lock = tmp_path / ".ref.lock"
    with FaultProxy(shared_server.url, pace_s=0.05) as proxy:  # slowed, so the first run is surely still recording
        first = gate_process(tmp_path, f"--oracle-url={proxy.url}", f"--oracle-suite={suite}", "--max-tokens=32", "--record=ref",
                             "--report-dir=first")
        deadline = time.monotonic() + 60
        while not lock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        holder = json.loads(lock.read_text())
        assert holder["pid"] == first.pid
        second = gate_process(tmp_path, f"--oracle-url={proxy.url}", f"--oracle-suite={suite}", "--max-tokens=32", "--record=ref",
                              "--report-dir=second")
        out2, _ = second.communicate(timeout=120)
        requests_when_refused = proxy.completions
        out1, _ = first.communicate(timeout=300)
    assert second.returncode == pytest.ExitCode.USAGE_ERROR, out2
    assert (f"--record ref: another oracle run (pid {first.pid} on {holder['host']}, started "
            f"{holder['started_utc']}) is recording into this folder; nothing was sent to the server; wait for it "
            "to finish, or record into another folder") in out2
    assert not (tmp_path / "second").exists()  # refused before its report folder was made
    assert first.returncode == 0, out1
    assert requests_when_refused <= 4  # the first run's own (warm-up + 3): the second sent none
    from oracle.store.reference import load_reference

    assert sorted(load_reference(tmp_path / "ref").case_ids) == sorted(r["id"] for r in tiny_rows())
    assert not lock.exists()  # let go when the first run finished


def test_a_stale_lock_is_named_with_the_fix(shared_server, tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()
    lock = tmp_path / ".ref.lock"
    lock.write_text(json.dumps({"pid": gone.pid, "host": os.uname().nodename, "started_utc": "2026-12-01T10:00:00Z",
                                "reference": "ref"}))
    with FaultProxy(shared_server.url) as proxy:
        run = gate_process(tmp_path, f"--oracle-url={proxy.url}", "--record=ref", "--report-dir=report")
        out, _ = run.communicate(timeout=120)
        assert proxy.completions == 0
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, out
    assert (f"--record ref: a stale lock {Path('.ref.lock')} of a run that is gone (pid {gone.pid} on "
            f"{os.uname().nodename}, started 2026-12-01T10:00:00Z); nothing was sent to the server; check that no "
            "oracle run records into ref, delete .ref.lock and run again") in out
    assert lock.exists() and not (tmp_path / "ref").exists() and not (tmp_path / "report").exists()


def test_a_write_failing_midway_keeps_what_was_written_and_says_so(shared_server, tmp_path):
    rows = tiny_rows()
    rows[0]["max_tokens"] = rows[1]["max_tokens"] = 8  # small records (~3 KB) are written ...
    rows[2]["max_tokens"] = 300  # ... the third (~26 KB of arrays) is past the limit
    suite = write_suite(tmp_path, "sized", rows)
    limit = 18_000  # bytes per file: above every report file of this run, below the third record
    run = gate_process(tmp_path, f"--oracle-url={shared_server.url}", f"--oracle-suite={suite}", "--report-dir=report",
                       *NO_WARMUP, fsize=limit)
    out, _ = run.communicate(timeout=600)
    report = tmp_path / "report"
    records = report / "records" / "boot1-c1"
    assert run.returncode == pytest.ExitCode.INTERRUPTED, out  # the run stopped midway
    assert ("oracle: the run stopped midway: prompt 'math-derivative' (boot1-c1, request 3 of 3): writing "
            "report/records/boot1-c1/math-derivative.npz failed (File too large); free space on that disk or give "
            "--report-dir a writable folder. The run stops here. No request was retried; 2 finished record(s) of "
            "that condition kept in report/records\n") in out
    assert sorted(p.name for p in records.iterdir()) == ["code-hashmap.json", "code-hashmap.npz",
                                                          "code-palindrome.json", "code-palindrome.npz"]
    rep = json.loads((report / "identity.json").read_text())
    assert rep["verdict"] == "partial" and rep["missing"] == ["math-derivative"]
    assert all(f.stat().st_size < limit for f in report.rglob("*") if f.is_file())
    assert not list(report.rglob("*.tmp"))  # the failed write left no half file


def test_an_edited_manifest_is_refused_before_any_request(shared_server, shared_reference, tmp_path):
    ref = tmp_path / "edited"
    shutil.copytree(shared_reference, ref)
    manifest = json.loads((ref / "manifest.json").read_text())
    manifest["run"]["seed"] = 99  # a hand edit; every record still matches its hash
    (ref / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    suite = write_suite(tmp_path, "tiny", tiny_rows())
    with FaultProxy(shared_server.url) as proxy:
        run = gate_process(tmp_path, f"--oracle-url={proxy.url}", f"--oracle-suite={suite}", "--max-tokens=32",
                           f"--reference={ref}", "--report-dir=report")
        out, _ = run.communicate(timeout=120)
        assert proxy.completions == 0
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, out
    assert (f"--reference {ref}: tainted: manifest.json was edited after it was written (its content no longer "
            f"matches its manifest_sha256); restore it from version control or re-record with --record {ref} "
            "--record-overwrite") in out
    assert not (tmp_path / "report").exists()


def test_an_older_reference_without_its_own_hash_gates_with_a_note(gate_run, shared_server, shared_reference,
                                                                   tmp_path, read_report):
    ref = tmp_path / "older"
    shutil.copytree(shared_reference, ref)
    manifest = json.loads((ref / "manifest.json").read_text())
    del manifest["manifest_sha256"]  # as oracle wrote manifests before they carried their own hash
    (ref / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    result = gate_run(f"--oracle-url={shared_server.url}", f"--reference={ref}", report="older")
    assert result.ret == 0, result.stdout.str()[-2000:]
    notes = read_report(result.folder)["notes"]
    assert (f"the reference {ref} was written before manifests carried their own hash (manifest_sha256): an edit "
            f"of its manifest.json cannot be detected; re-record it, or seal it as it is with `oracle seal {ref}`"
            ) in notes
