"""A report folder's seal: identity.json carries the sha256 of every file the run wrote beside it (records, server
logs, identity.md, the workers' folders under -n), the reference it was gated against (by that reference's
manifest hash) and the hash of its own content, so an edit after the run is found and named.

    report["seal"] = seal_of(folder, report, reference=ref, judged_under={...})  # the last write of a run
    status = verify_seal(folder)          # SealStatus: "sealed" or "unverified" (no seal: written before seals)
                                          # SealError (an InputFileError) naming the file that differs

What oracle writes into a folder after its run (`oracle html`: identity.html; `oracle repro`: repro/) is not
sealed: it is listed apart, as written later.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from oracle.store.identity import file_sha256
from oracle.store.json_files import InputFileError, read_json
from oracle.store.shapes import REPORT_FIX

__all__ = ["LATER", "SEAL_KEY", "SELF_KEY", "SealError", "SealStatus", "content_digest", "seal_of", "verify_seal"]

SEAL_KEY = "seal"
SELF_KEY = "identity_sha256"  # the seal's hash of identity.json's content, itself left out
REPORT_FILE = "identity.json"
# Written into a report folder after its run by oracle's own commands: listed apart, never sealed.
LATER = ("identity.html", "repro")
SEAL_FIX = ("restore the folder from where it was copied; a report is evidence only as its run wrote it "
            "(run the gate again for a new one)")


class SealError(InputFileError):
    """A report whose seal does not hold: the message names the file that differs and the fix."""


@dataclass(frozen=True)
class SealStatus:
    """What the seal says of a folder: `sealed` (every sealed file as written) or `unverified` (no seal)."""

    status: str
    reason: str = ""
    later: tuple[str, ...] = ()  # files written into the folder after the run (not sealed)
    seal: dict = field(default_factory=dict)

    @property
    def sealed(self) -> bool:
        return self.status == "sealed"


def content_digest(report: dict) -> str:
    """The sha256 of a report's content (canonical JSON) without the seal's own hash: reformatting keeps it, any
    changed value changes it."""
    seal = dict(report.get(SEAL_KEY) or {})
    seal.pop(SELF_KEY, None)
    content = dict(report, **{SEAL_KEY: seal}) if SEAL_KEY in report else report
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _later(rel: str) -> bool:
    return rel.split("/", 1)[0] in LATER


def _files(folder: Path) -> dict[str, Path]:
    """Every file in the folder a run wrote: identity.json itself, what is written later and hidden probe files
    (the preflight write) left out."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and rel != REPORT_FILE and not p.name.startswith(".oracle-preflight-"):
            out[rel] = p
    return out


def seal_of(folder: Path, report: dict, *, reference: dict | None, judged_under: dict) -> dict:
    """The seal of a run's last write: its files' hashes, its reference, what it was judged under and the hash
    of the report's content with this seal in it (report is not changed)."""
    files = {rel: file_sha256(p) for rel, p in _files(folder).items() if not _later(rel)}
    seal = {"files": files, "reference": reference, "judged_under": judged_under, "later": list(LATER)}
    seal[SELF_KEY] = content_digest(dict(report, **{SEAL_KEY: seal}))
    return seal


def verify_seal(folder: Path, report: dict | None = None) -> SealStatus:
    """Check a report folder against its seal. SealStatus `unverified` when identity.json has none (a report
    written before seals, or a run killed before its last write); SealError naming the file that differs."""
    path = folder / REPORT_FILE
    if report is None:
        report = read_json(path, dict, fix=REPORT_FIX)
    seal = report.get(SEAL_KEY)
    if seal is None:
        return SealStatus("unverified", f"{path}: no seal (a report written before reports were sealed, or a run "
                                        "stopped before its last write)")
    if not isinstance(seal, dict) or not isinstance(seal.get("files"), dict) or not seal.get(SELF_KEY):
        raise SealError(f"{path}: its seal is not one oracle writes; {SEAL_FIX}")
    if content_digest(report) != seal[SELF_KEY]:
        raise SealError(f"{path}: edited after the run (its content no longer matches the seal's {SELF_KEY}); "
                        f"{SEAL_FIX}")
    found = _files(folder)
    for rel, digest in seal["files"].items():
        if not isinstance(rel, str) or not isinstance(digest, str):
            raise SealError(f"{path}: its seal is not one oracle writes; {SEAL_FIX}")
        if rel not in found:
            raise SealError(f"{folder / rel}: missing (the seal lists it); {SEAL_FIX}")
        if file_sha256(found[rel]) != digest:
            raise SealError(f"{folder / rel}: changed after the run (its sha256 is not the seal's); {SEAL_FIX}")
    extra = [rel for rel in found if rel not in seal["files"]]
    added = [rel for rel in extra if not _later(rel)]
    if added:
        raise SealError(f"{folder / added[0]}: added after the run (the seal does not list it); remove it, or "
                        f"{SEAL_FIX}")
    return SealStatus("sealed", later=tuple(extra), seal=seal)
