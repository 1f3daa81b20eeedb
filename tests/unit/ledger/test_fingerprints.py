"""Output fingerprints from a report's records: equal exactly when the tokens and finish reason are; the top-k
fingerprint moves with any bit of a logprob; a report without its records folder has tokens' fingerprints only."""

from __future__ import annotations

from pathlib import Path

from oracle.ledger.fingerprints import fingerprints
from oracle.store.records import PRIMARY, Record, save_record


def _report(folder: Path, *, finish: str = "length", logprob: float = -1.0, ids=(5, 6, 7)) -> tuple[dict, Path]:
    record = Record(id="p", condition=PRIMARY, prompt_ids=[1, 2], completion_ids=list(ids), finish_reason=finish,
                    top_ids=[[t, t + 1] for t in ids], top_logprobs=[[logprob, -2.0] for _ in ids])
    save_record(folder / "records", record)
    return {"records": {"folder": "records", "finished": {"p@boot1-c1": record.meta()}}}, folder


def test_the_same_output_on_two_machines_has_one_fingerprint(tmp_path):
    a, b = fingerprints(*_report(tmp_path / "a")), fingerprints(*_report(tmp_path / "b"))
    assert a == b and a["p"]["top_sha256"] and a["p"]["finish_reason"] == "length"


def test_other_tokens_or_another_finish_reason_is_another_fingerprint(tmp_path):
    base = fingerprints(*_report(tmp_path / "a"))["p"]
    tokens = fingerprints(*_report(tmp_path / "b", ids=(5, 6, 8)))["p"]
    finish = fingerprints(*_report(tmp_path / "c", finish="stop"))["p"]
    assert len({base["fingerprint"], tokens["fingerprint"], finish["fingerprint"]}) == 3
    assert finish["completion_sha256"] == base["completion_sha256"]  # the same tokens, stopped otherwise


def test_a_logprob_one_ulp_away_moves_the_top_k_fingerprint_only(tmp_path):
    import numpy as np

    base = fingerprints(*_report(tmp_path / "a"))["p"]
    moved = fingerprints(*_report(tmp_path / "b", logprob=float(np.nextafter(np.float32(-1.0), np.float32(0)))))["p"]
    assert moved["fingerprint"] == base["fingerprint"] and moved["top_sha256"] != base["top_sha256"]


def test_without_the_records_folder_the_tokens_still_have_their_fingerprint(tmp_path):
    report, folder = _report(tmp_path / "a")
    (folder / "records" / PRIMARY.key / "p.npz").unlink()
    found = fingerprints(report, folder)["p"]
    assert found["fingerprint"] and found["top_sha256"] is None
