"""Output fingerprints: per prompt of a run's primary run, the sha256 of its complete token array and finish
reason (and of its top-k logprobs where the report's records hold them), so two runs on two machines compare in
the ledger without moving their records.

    fingerprints(report, folder)   # {"code-hashmap": {"completion_sha256", "finish_reason", "fingerprint",
                                   #                   "top_sha256"}, ...}

Two prompts' outputs are identical when their fingerprints are; `oracle fleet` groups machines by them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from oracle.store.json_files import InputFileError
from oracle.store.records import PRIMARY, RecordKey, load_record

__all__ = ["fingerprint", "fingerprints"]


def fingerprint(completion_sha256: str, finish_reason: str | None) -> str:
    """The sha256 of a completion's token array (its own sha256, as references and reports hold it) and its finish
    reason: equal exactly when the tokens and the way they stopped are."""
    return hashlib.sha256(f"{completion_sha256}\n{finish_reason or ''}".encode()).hexdigest()


def _top_sha256(folder: Path, condition, rid: str) -> str | None:
    """The sha256 of the record's top-k ids and logprobs (floats written exactly), None when not kept."""
    try:
        record = load_record(folder, condition, rid)
    except (FileNotFoundError, InputFileError, OSError):
        return None
    if not any(record.top_ids):
        return None
    payload = json.dumps({"ids": record.top_ids, "logprobs": record.top_logprobs}, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


def fingerprints(report: dict, folder: Path) -> dict[str, dict]:
    """Per prompt of the primary run (its first copy, on the server that owned it): its fingerprint fields."""
    out: dict[str, dict] = {}
    finished = ((report.get("records") or {}).get("finished") or {})
    if not isinstance(finished, dict):
        return out
    for key_text, meta in finished.items():
        if not isinstance(meta, dict) or not isinstance(meta.get("completion_sha256"), str):
            continue
        key = RecordKey.parse(key_text)
        if key.condition != PRIMARY or key.server is not None or meta.get("repeat", 0):
            continue
        rid, finish = meta.get("id") or key.record, meta.get("finish_reason")
        records = folder / (meta.get("folder") or (report.get("records") or {}).get("folder") or "records")
        out[rid] = {"completion_sha256": meta["completion_sha256"], "finish_reason": finish,
                    "fingerprint": fingerprint(meta["completion_sha256"], finish),
                    "top_sha256": _top_sha256(records, PRIMARY, rid)}
    return out
