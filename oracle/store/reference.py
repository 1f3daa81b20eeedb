"""The reference store: a recorded run saved with its identity and hashes.

    references/NAME/manifest.json        schema_version, kind, identity, hashes of every file, its own hash
    references/NAME/records/boot1-c1/    ID.npz + ID.json per prompt
    references/NAME/records/BLOCK/boot1-c1/      a check's own completions, each a row of its block (schema 2;
                                                 named by `side_record_name`): records/canaries/ the canary requests'

The manifest's other keys are the check kinds' blocks (`canaries`, `noise`, `logits`, `speed`, ...): each check
kind says what it keeps (`CheckDescriptor.for_reference`); the store writes, verifies and hands back blocks by
their key and names none.

A reference is written whole into a temporary sibling folder and renamed into place, so
a crash never leaves half a reference. One whose files do not match the manifest, or whose
manifest does not match its own `manifest_sha256`, is refused as tainted.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from oracle.redaction import public_data
from oracle.store.json_files import InputFileError, read_json, validated
from oracle.store.records import PRIMARY, Condition, Record, atomic_write_bytes, load_record, save_record
from oracle.store.shapes import ManifestShape
from oracle.store.stamps import utc_now

__all__ = ["OWN_KEYS", "READABLE_SCHEMA_VERSIONS", "REFERENCE_SCHEMA_VERSION", "Reference", "ReferenceError",
           "check_blocks", "check_record_target", "load_reference", "manifest_digest", "seal", "side_record_name",
           "write_reference"]

# 2: a check's own completions are kept as records under records/<block>/ (their rows in the block name their
# completion_sha256: the canary requests'). A schema 1 reference is read as it is: it holds no such completion.
REFERENCE_SCHEMA_VERSION = 2
READABLE_SCHEMA_VERSIONS = (1, 2)
# The manifest's own keys; every other top-level key is a check kind's block.
OWN_KEYS = ("schema_version", "kind", "created_utc", "identity", "run", "conditions", "cases", "files",
            "manifest_sha256")
KINDS = ("mtp0", "f16")
SELF_HASH = "manifest_sha256"  # the sha256 of the manifest's own content, this key left out
UNSEALED_NOTE = ("the reference {path} was written before manifests carried their own hash ({key}): an edit of "
                 "its manifest.json cannot be detected; re-record it, or seal it as it is with "
                 "`oracle seal {path}`")


class ReferenceError(InputFileError):
    """A reference that cannot be used or written; the message names the path and the fix."""


@dataclass
class Reference:
    path: Path
    manifest: dict
    notes: tuple[str, ...] = ()  # for the report: e.g. a manifest without its own hash

    @property
    def kind(self) -> str:
        return self.manifest["kind"]

    @property
    def case_ids(self) -> list[str]:
        return list(self.manifest["cases"])

    def record(self, rid: str, condition: Condition = Condition()) -> Record:
        return load_record(self.path / "records", condition, rid)

    def conditions(self) -> list[Condition]:
        return [Condition.from_key(k) for k in self.manifest.get("conditions", ["boot1-c1"])]

    def block(self, key: str):
        """A check kind's block of the manifest (None: the reference holds none)."""
        return self.manifest.get(key)

    @property
    def keeps_side_records(self) -> bool:
        """Whether this reference was written by an oracle that keeps checks' own completions (schema 2 and
        later: the canary requests')."""
        return self.manifest.get("schema_version", 1) >= 2

    def side_record(self, key: str, item_id: str) -> Record | None:
        """The completion of row `item_id` of block `key`, as the reference recorded it; None when it holds none
        (its row has no completion_sha256: a schema 1 reference, or an item it did not run)."""
        row = (self.manifest.get(key) or {}).get(item_id)
        if not isinstance(row, dict) or not row.get("completion_sha256"):
            return None
        return load_record(self.path / "records" / key, PRIMARY, side_record_name(item_id))


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest_digest(manifest: dict) -> str:
    """The sha256 of a manifest's content (its canonical JSON, without its own hash): a reformatted manifest keeps
    it, any changed value changes it."""
    content = {k: v for k, v in manifest.items() if k != SELF_HASH}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def sealed_manifest(manifest: dict) -> bytes:
    """manifest.json's bytes, carrying its own hash."""
    sealed = dict(manifest, **{SELF_HASH: manifest_digest(manifest)})
    return (json.dumps(sealed, indent=1, sort_keys=True) + "\n").encode()


def side_record_name(item_id: str) -> str:
    """The file stem of a block row's record (a canary's): its item id where that is a plain file name
    (`needle[512-d0]`), else
    the id with its other characters replaced and a short hash of it, so two ids never share a file."""
    plain = re.sub(r"[^A-Za-z0-9._\-\[\]]", "_", item_id)
    if plain == item_id and not item_id.startswith("."):
        return item_id
    return f"_{plain[:80]}-{hashlib.sha256(item_id.encode()).hexdigest()[:12]}"


def check_record_target(path: Path, *, overwrite: bool) -> None:
    """Refuse, before any request, to record onto an existing reference without --record-overwrite."""
    if path.exists() and not path.is_dir():
        raise ReferenceError(f"--record {path}: exists and is not a folder; choose another path")
    if path.is_dir() and any(path.iterdir()) and not overwrite:
        what = "a reference" if (path / "manifest.json").exists() else "a non-empty folder"
        raise ReferenceError(f"--record {path}: {what} is already there and was left untouched; "
                             "record into a new folder, or add --record-overwrite to replace it")


def write_reference(path: Path, records: list[Record], *, kind: str, identity: dict, run: dict,
                    blocks: dict | None = None, side_records: dict[str, list[Record]] | None = None,
                    overwrite: bool = False) -> Reference:
    """Write records + manifest atomically; the old reference (if overwriting) is replaced whole. blocks: each
    check kind's block by its key (`CheckDescriptor.for_reference`); side_records: block key -> the completions of
    its rows (each record's id its row's key), kept apart under records/<key>/."""
    check_record_target(path, overwrite=overwrite)
    if kind not in KINDS:
        raise ReferenceError(f"--reference-kind {kind!r}: must be one of {', '.join(KINDS)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.recording."))
    try:
        for r in records:
            save_record(staging / "records", r)
        blocks = dict(blocks or {})
        clash = sorted(set(blocks) & set(OWN_KEYS))
        if clash:
            raise ReferenceError(f"a check's block may not be named {clash[0]!r}: the manifest's own key")
        for key, kept in (side_records or {}).items():
            rows = blocks[key] = {k: dict(v) for k, v in (blocks.get(key) or {}).items()}
            for r in kept:
                if r.id not in rows:
                    raise ReferenceError(f"a completion of {r.id!r} without its row in {key!r}")
                save_record(staging / "records" / key,
                            replace(r, id=side_record_name(r.id), condition=PRIMARY, repeat=0))
                rows[r.id]["completion_sha256"] = r.completion_sha256
        files = {str(p.relative_to(staging)): _sha256(p)
                 for p in sorted((staging / "records").rglob("*")) if p.is_file()}
        primary = [r for r in records if r.condition == Condition()]
        if len(primary) != len(records):
            raise ReferenceError("a reference holds the primary run (boot1-c1) only; the other conditions "
                                 "go into its noise envelope")
        manifest = {
            "schema_version": REFERENCE_SCHEMA_VERSION,
            "kind": kind,
            "created_utc": utc_now(),
            "identity": identity,
            "run": run,
            "conditions": sorted({r.condition.key for r in records}),
            "cases": {r.id: {k: r.meta()[k] for k in ("prompt_sha256", "completion_sha256", "text_sha256",
                                                      "finish_reason", "completion_tokens")}
                      for r in primary},
            "files": files,
            **blocks,
        }
        # Made public before it is sealed: the hash it carries is the hash of what is written.
        atomic_write_bytes(staging / "manifest.json", sealed_manifest(public_data(manifest)))
        old = None
        if path.exists():
            old = path.with_name(f".{path.name}.replaced.{int(time.time())}")
            path.rename(old)
        staging.rename(path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Reference(path, manifest)


def load_reference(path: Path) -> Reference:
    """Load and verify a reference: its manifest's own hash, schema version and shape, every file against its
    hash, every record readable and agreeing with the manifest; raise ReferenceError naming the file and the fix."""
    manifest_path = path / "manifest.json"
    if not manifest_path.is_file():
        raise ReferenceError(f"--reference {path}: no manifest.json there; record one first with "
                             f"`pytest --backend=... --record {path}`")
    rerecord = (f"the reference is damaged: restore it from version control or re-record it with "
                f"`pytest --backend=... --record {path} --record-overwrite`")
    try:
        manifest = read_json(manifest_path, dict, fix=rerecord)
    except InputFileError as exc:
        raise ReferenceError(f"--reference {path}: {exc}") from None
    notes = ()
    if SELF_HASH not in manifest:
        notes = (UNSEALED_NOTE.format(path=path, key=SELF_HASH),)
    elif manifest[SELF_HASH] != manifest_digest(manifest):
        raise ReferenceError(f"--reference {path}: tainted: manifest.json was edited after it was written (its "
                             f"content no longer matches its {SELF_HASH}); restore it from version control or "
                             f"re-record with --record {path} --record-overwrite")
    version = manifest.get("schema_version")
    if version not in READABLE_SCHEMA_VERSIONS:
        raise ReferenceError(f"--reference {path}: schema version {version}, this oracle reads "
                             f"{REFERENCE_SCHEMA_VERSION}; re-record with `pytest --backend=... --record {path} "
                             "--record-overwrite`")
    try:
        validated(manifest_path, manifest, ManifestShape, fix=rerecord)
        _verify_files(path, manifest["files"])
        _verify_records(path, manifest)
    except ReferenceError:
        raise
    except InputFileError as exc:
        raise ReferenceError(f"--reference {path}: {exc}") from None
    return Reference(path, manifest, notes)


def _verify_files(path: Path, files: dict[str, str]) -> None:
    """Every file the manifest lists is there, inside records/, with its hash; no other file is in records/."""
    for rel, digest in files.items():
        parts = Path(rel).parts
        if Path(rel).is_absolute() or ".." in parts or parts[:1] != ("records",):
            raise ReferenceError(f"--reference {path}: tainted: manifest.json lists {rel!r}, a file outside its "
                                 "records/ folder; re-record the reference")
        f = path / rel
        if not f.is_file():
            raise ReferenceError(f"--reference {path}: tainted: {f} is missing; restore it from version "
                                 f"control or re-record with --record {path} --record-overwrite")
        if _sha256(f) != digest:
            raise ReferenceError(f"--reference {path}: tainted: {f} does not match its sha256 in manifest.json; "
                                 f"restore it or re-record with --record {path} --record-overwrite")
    records_dir = path / "records"
    extra = [str(p.relative_to(path)) for p in records_dir.rglob("*") if p.is_file()
             and str(p.relative_to(path)) not in files] if records_dir.is_dir() else []
    if extra:
        raise ReferenceError(f"--reference {path}: tainted: {extra[0]} is not in manifest.json; "
                             "remove it or re-record the reference")


def _verify_records(path: Path, manifest: dict) -> None:
    """Every record the manifest lists reads back (InputFileError naming the file if not), and each case's tokens
    are the ones its manifest entry names: `oracle diff` and the gate compare by those hashes."""
    records, read = path / "records", {}
    for rel in manifest["files"]:
        rel_path = Path(rel)
        if rel_path.parts[1:2] in [(k,) for k in manifest if k not in OWN_KEYS]:
            continue  # a block's own completions: read by its rows below
        if rel_path.suffix == ".json":
            condition = rel_path.parent.name
            if not re.fullmatch(r"boot[0-9]+-c[0-9]+(-r[0-9]+)?", condition):
                raise ReferenceError(f"--reference {path}: tainted: {rel} is in no condition's folder "
                                     "(boot1-c1, ...); re-record the reference")
            read[(condition, rel_path.stem)] = load_record(records, Condition.from_key(condition), rel_path.stem)
    for rid, case in manifest["cases"].items():
        record = read.get((PRIMARY.key, rid))
        if record is None:
            raise ReferenceError(f"--reference {path}: tainted: case {rid!r} of manifest.json has no record "
                                 f"records/{PRIMARY.key}/{rid}.json; re-record the reference")
        if record.completion_sha256 != case["completion_sha256"]:
            raise ReferenceError(f"--reference {path}: tainted: case {rid!r}: its completion_sha256 in "
                                 f"manifest.json is not the hash of records/{PRIMARY.key}/{rid}.npz's tokens; "
                                 f"re-record with --record {path} --record-overwrite")
    for key in manifest:
        if key not in OWN_KEYS and isinstance(manifest[key], dict):
            _verify_side_records(path, key, manifest[key])


def _verify_side_records(path: Path, key: str, block: dict) -> None:
    """Every row of a block that names a completion (a canary's) has its record, holding those tokens."""
    for item_id, row in block.items():
        digest = row.get("completion_sha256") if isinstance(row, dict) else None
        if not digest:
            continue
        name = f"records/{key}/{PRIMARY.key}/{side_record_name(item_id)}"
        try:
            record = load_record(path / "records" / key, PRIMARY, side_record_name(item_id))
        except FileNotFoundError:
            raise ReferenceError(f"--reference {path}: tainted: {key} row {item_id!r} of manifest.json has no "
                                 f"record {name}.json; re-record the reference") from None
        if record.completion_sha256 != digest:
            raise ReferenceError(f"--reference {path}: tainted: {key} row {item_id!r}: its completion_sha256 in "
                                 f"manifest.json is not the hash of {name}.npz's tokens; re-record with "
                                 f"--record {path} --record-overwrite")


def check_blocks(reference: Reference, shapes: Mapping[str, Any]) -> None:
    """Each check kind's block the reference holds, against the shape its kind declares (`CheckDescriptor.blocks`);
    ReferenceError naming the key and the fix."""
    if not shapes:
        return
    blocks = msgspec.defstruct("Blocks", [(key, shape | None, None) for key, shape in shapes.items()],
                               forbid_unknown_fields=False)
    try:
        validated(reference.path / "manifest.json", reference.manifest, blocks,
                  fix=f"re-record it with `pytest --backend=... --record {reference.path} --record-overwrite`")
    except InputFileError as exc:
        raise ReferenceError(f"--reference {reference.path}: {exc}") from None


def seal(path: Path) -> str:
    """Add its own hash to the manifest of an older reference whose files still match (verified first)."""
    manifest = load_reference(path).manifest
    atomic_write_bytes(path / "manifest.json", sealed_manifest(manifest))
    return manifest_digest(manifest)

