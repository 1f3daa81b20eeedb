"""The declared shapes of the JSON files oracle writes and reads back (checked by `json_files.read_json`): a
reference's manifest.json, a record's ID.json, a report's identity.json. Each declares the keys its readers use,
with their types; keys a reader does not use may hold anything, and a key a newer oracle adds is let through. A
check kind's blocks (a manifest's `canaries`, `noise`, ...) are declared by the kind (`CheckDescriptor.blocks`,
checked by `check_blocks`), not here.

    read_json(ref / "manifest.json", ManifestShape, fix=...)
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

__all__ = ["CodeSetShape", "ManifestShape", "REPORT_FIX", "RecordShape", "ReportShape", "ReproOutcomeShape", "Shape"]

REPORT_FIX = ("give a report folder as oracle wrote it (restore it from where it was copied), or write it again "
              "by running the gate")

Json = dict[str, Any]
# A condition key (`Condition.key`): boot1-c1, boot2-c8-r2; a record key in a report (`str(RecordKey)`): id@condition
# or id@condition@server.
ConditionKey = Annotated[str, msgspec.Meta(pattern=r"^boot[0-9]+-c[0-9]+(-r[0-9]+)?$")]
RecordKeyText = Annotated[str, msgspec.Meta(pattern=r"^[^@]*@boot[0-9]+-c[0-9]+(-r[0-9]+)?(@[^@]*)?$")]


class Shape(msgspec.Struct, forbid_unknown_fields=False):
    """Keys beyond the declared ones are let through: a reader reads the keys it knows."""


_Shape = Shape


class SamplingShape(_Shape):
    temperature: float
    seeds: list[int]
    top_p: float = 1.0


class RunShape(_Shape):
    max_tokens: int | None = None
    seed: int | None = None
    logprobs: int | None = None
    sampling: SamplingShape | None = None


class CaseShape(_Shape):
    completion_sha256: str
    prompt_sha256: str = ""
    text_sha256: str = ""
    finish_reason: str | None = None
    completion_tokens: int = 0


class RequestShape(_Shape):
    seed: int = 1234
    logprobs: int | None = None


class IdentityShape(_Shape):
    launch_command: str | None = None
    server_args: str | None = None
    target: str | None = None
    backend: str | None = None
    url: str | None = None
    model: Json | None = None
    request: RequestShape | None = None


class ManifestShape(_Shape):
    schema_version: int
    kind: str
    cases: dict[str, CaseShape]
    files: dict[str, str] = {}
    manifest_sha256: str | None = None
    created_utc: str | None = None
    identity: IdentityShape | None = None
    run: RunShape | None = None
    conditions: list[ConditionKey] = []


class RecordShape(_Shape):
    """A record's ID.json (`Record.meta()`); its arrays are in ID.npz."""

    id: str
    condition: ConditionKey
    finish_reason: str
    completion_sha256: str
    text: str = ""
    cached_prompt_tokens: int | None = None
    drafted: int | None = None
    accepted: int | None = None
    ttft_s: float | None = None
    started_at: float = 0.0
    finished_at: float = 0.0
    repeat: int = 0
    ids_source: str = "server"
    server_timings: Json | None = None


class CheckShape(_Shape):
    id: str
    verdict: str
    evidence: Json | None = None


class FinishedShape(_Shape):
    id: str
    completion_sha256: str
    condition: ConditionKey = "boot1-c1"
    finish_reason: str | None = None
    repeat: int = 0
    folder: str | None = None


class RecordsShape(_Shape):
    finished: dict[RecordKeyText, FinishedShape] = {}


class ReferenceNameShape(_Shape):
    path: str | None = None


class ReportShape(_Shape):
    """A report's identity.json, as `oracle diff`, `html`, `repro` and the sweep read it."""

    mode: str  # record, gate or run: every report oracle writes says which (`{}` is no report)
    schema_version: int = 1
    backend: str | None = None
    complete: bool | None = None
    interruption: str | None = None
    prompts: list[str] | None = None
    checks: list[CheckShape] = []
    identity: IdentityShape | None = None
    records: RecordsShape | None = None
    reference: ReferenceNameShape | None = None
    summary: Json | None = None


class CodeItemShape(_Shape):
    id: str
    level: int
    program: str
    program_sha256: str
    expected: str | int


class CodeSetShape(_Shape):
    """A code-result canary set (`python -m oracle.canary.code build`)."""

    items: list[CodeItemShape]
    schema_version: int = 1


class ReproOutcomeShape(_Shape):
    """repro.json, as the sweep reads it back."""

    status: str | None = None
    exit_code: int | None = None
