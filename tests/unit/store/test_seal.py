"""A report folder's seal (store/seal.py): every file the run wrote, its reference and its own content hashed; an
edit, a changed record or log, a missing or an added file is named; what oracle writes later (identity.html, repro/)
is listed apart; a report written before seals is unverified, never refused for that."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oracle.store.seal import SealError, content_digest, seal_of, verify_seal

REFERENCE = {"path": "ref", "resolved": "/abs/ref", "manifest_sha256": "ab" * 32}


def _sealed(folder: Path) -> dict:
    (folder / "records" / "boot1-c1").mkdir(parents=True)
    (folder / "records" / "boot1-c1" / "p.json").write_text('{"id": "p"}')
    (folder / "server-boot1.log").write_text("llama-server log\n")
    (folder / "identity.md").write_text("# report\n")
    report = {"mode": "gate", "verdict": "fail", "checks": [{"id": "tokens[p]", "verdict": "near-tie"}]}
    report["seal"] = seal_of(folder, report, reference=REFERENCE, judged_under={"near_tie_nats": 0.5})
    (folder / "identity.json").write_text(json.dumps(report, indent=1))
    return report


def test_a_sealed_folder_verifies_and_lists_what_was_written_later(tmp_path):
    report = _sealed(tmp_path)
    assert sorted(report["seal"]["files"]) == ["identity.md", "records/boot1-c1/p.json", "server-boot1.log"]
    assert report["seal"]["reference"] == REFERENCE
    (tmp_path / "identity.html").write_text("<html>")  # oracle html
    (tmp_path / "repro").mkdir()
    (tmp_path / "repro" / "repro.json").write_text("{}")  # oracle repro
    status = verify_seal(tmp_path)
    assert status.sealed and status.later == ("identity.html", "repro/repro.json")
    # Reformatted (the same content): still sealed.
    (tmp_path / "identity.json").write_text(json.dumps(report, indent=4, sort_keys=True))
    assert verify_seal(tmp_path).sealed


@pytest.mark.parametrize("change, named", [
    (None, None),  # identity.json's verdict edited
    (lambda f: f.joinpath("records/boot1-c1/p.json").write_text('{"id": "q"}'), "records/boot1-c1/p.json: changed"),
    (lambda f: f.joinpath("server-boot1.log").unlink(), "server-boot1.log: missing"),
    (lambda f: f.joinpath("records/boot1-c1/extra.json").write_text("{}"), "extra.json: added after the run"),
    (lambda f: f.joinpath("identity.md").write_text("# pass\n"), "identity.md: changed"),
])
def test_a_change_after_the_run_is_named(tmp_path, change, named):
    _sealed(tmp_path)
    if named is None:  # identity.json edited: its verdict
        data = json.loads((tmp_path / "identity.json").read_text())
        data["verdict"] = "pass"
        (tmp_path / "identity.json").write_text(json.dumps(data))
        named = "identity.json: edited after the run"
    else:
        change(tmp_path)
    with pytest.raises(SealError, match=named.replace(".", r"\.")):
        verify_seal(tmp_path)


def test_the_seals_own_hash_is_part_of_what_it_hashes(tmp_path):
    report = _sealed(tmp_path)
    assert content_digest(report) == report["seal"]["identity_sha256"]
    report["seal"]["reference"]["manifest_sha256"] = "cd" * 32  # gated against another reference: an edit
    with pytest.raises(SealError, match="edited after the run"):
        verify_seal(tmp_path, report)


def test_a_report_written_before_seals_is_unverified_not_refused(tmp_path):
    (tmp_path / "identity.json").write_text(json.dumps({"mode": "gate", "verdict": "pass"}))
    status = verify_seal(tmp_path)
    assert status.status == "unverified" and "no seal" in status.reason


@pytest.mark.parametrize("seal", [[], {"files": []}, {"files": {}}, {"files": {"a": 1}, "identity_sha256": "x"}])
def test_a_seal_oracle_does_not_write_is_refused(tmp_path, seal):
    (tmp_path / "identity.json").write_text(json.dumps({"mode": "gate", "seal": seal}))
    with pytest.raises(SealError):
        verify_seal(tmp_path)
