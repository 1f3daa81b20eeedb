"""Prompt suites: fixed prompt sets loaded from JSONL (or any file `datasets` reads).

Each line: ``{"id": str, "class": str, "messages": [{"role", "content"}...], "max_tokens": int}``.

    suite = load_suite("default")
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

import msgspec

__all__ = ["ID_MAX", "ID_RULE", "Prompt", "Suite", "SuiteError", "builtin_suite_path", "id_refusal", "load_suite"]

_ROLES = {"system", "user", "assistant", "tool"}


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Prompt:
    id: str
    klass: str
    messages: tuple[dict, ...]
    max_tokens: int
    seed: int | None = None  # sampled runs: this request's seed (run/sampling.py); None: the run's --oracle-seed


@dataclass(frozen=True)
class Suite:
    name: str
    path: str
    prompts: tuple[Prompt, ...]
    sha256: str

    def ids(self) -> list[str]:
        return [p.id for p in self.prompts]

    def with_max_tokens(self, max_tokens: int | None) -> "Suite":
        if max_tokens is None:
            return self
        prompts = tuple(dataclasses.replace(p, max_tokens=max_tokens) for p in self.prompts)
        return Suite(self.name, self.path, prompts, self.sha256)

    def only(self, ids: set[str]) -> "Suite":
        return Suite(self.name, self.path, tuple(p for p in self.prompts if p.id in ids), self.sha256)


def builtin_suite_path(name: str) -> Path | None:
    """The packaged suite called NAME, or None."""
    candidate = resources.files("oracle.prompts").joinpath(f"{name}.jsonl")
    return Path(str(candidate)) if candidate.is_file() else None


def load_suite(name_or_path: str) -> Suite:
    """Load a built-in suite by name, or a user's JSONL / `datasets`-readable file by path."""
    path = builtin_suite_path(name_or_path)
    if path is None:
        path = Path(name_or_path)
        if not path.is_file():
            known = sorted(p.name[:-6] for p in resources.files("oracle.prompts").iterdir()
                           if p.name.endswith(".jsonl"))
            raise SuiteError(
                f"--oracle-suite {name_or_path!r}: no built-in suite of that name and no such file; "
                f"built-in suites: {', '.join(known)}; or give a path to a JSONL file"
            )
    prompts = tuple(_prompt(row, where) for where, row in _read_rows(path))
    if not prompts:
        raise SuiteError(f"{path}: the suite has no prompts; add one JSON object per line")
    seen: set[str] = set()
    for p in prompts:
        if p.id in seen:
            raise SuiteError(f"{path}: prompt id {p.id!r} appears twice; ids must be unique")
        seen.add(p.id)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    name = path.stem if builtin_suite_path(path.stem) == path else str(path)
    return Suite(name=name, path=str(path), prompts=prompts, sha256=digest)


def _read_rows(path: Path) -> list[tuple[str, dict]]:
    """(where, row) pairs: where is `file:line` (JSONL) or `file:line` of the CSV row, its header being line 1."""
    if path.suffix in (".jsonl", ".json"):
        rows = []
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise SuiteError(f"{path}: not UTF-8 text (byte {exc.start}); save the suite as UTF-8 JSONL") from None
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SuiteError(f"{path}:{lineno}: not valid JSON ({exc.msg}); "
                                 "each line must be one JSON object") from None
            except RecursionError:  # json's reader recurses once per nesting level
                raise SuiteError(f"{path}:{lineno}: nested too deeply to read; each line must be one flat JSON "
                                 'object such as {"id": ..., "class": ..., "messages": [...], "max_tokens": ...}') from None
            if not isinstance(row, dict):
                raise SuiteError(f"{path}:{lineno}: a JSON {type(row).__name__}, not an object; each line must be "
                                 'one JSON object such as {"id": ..., "class": ..., "messages": [...], '
                                 '"max_tokens": ...}')
            rows.append((f"{path}:{lineno}", row))
        return rows
    import datasets  # heavy import, only for non-JSONL suites

    builder = {".csv": "csv", ".parquet": "parquet", ".arrow": "arrow"}.get(path.suffix)
    if builder is None:
        raise SuiteError(f"{path}: unknown suite format {path.suffix!r}; use .jsonl, .csv, .parquet or .arrow")
    try:
        table = datasets.load_dataset(builder, data_files=str(path), split="train")
    except Exception as exc:  # noqa: BLE001 - datasets and its readers (arrow, pandas) raise many types
        cause = exc.__cause__ or exc  # datasets wraps the reader's own error, which says what is wrong
        reason = (str(cause).strip().splitlines() or ["no reason given"])[-1][:200]
        raise SuiteError(f"{path}: cannot be read as a {path.suffix[1:]} suite ({type(cause).__name__}: {reason}); "
                         "check that the file is whole and of that format, or write the suite as JSONL") from None
    rows = []
    for index, row in enumerate(table):
        row, where = dict(row), f"{path}:{index + 2}"  # line 1 of a CSV is its header
        if isinstance(row.get("id"), int) and not isinstance(row["id"], bool):  # a column of numbers, as text
            row["id"] = str(row["id"])
        if isinstance(row.get("messages"), str):
            try:
                row["messages"] = json.loads(row["messages"])
            except json.JSONDecodeError as exc:
                raise SuiteError(f"{where}: the messages field is not JSON ({exc.msg}); write it as a JSON list "
                                 'such as [{"role": "user", "content": "..."}]') from None
        rows.append((where, row))
    return rows


class _Message(msgspec.Struct):
    role: Literal["system", "user", "assistant", "tool"]
    content: str


class _Row(msgspec.Struct):
    """A suite row's declared shape (other keys are the suite's own notes, ignored). Strict: `true` is not a
    token count, `null` not an id."""

    id: str  # a CSV column of numbers is read as text where the CSV is read
    klass: str = msgspec.field(name="class")
    messages: Annotated[list[_Message], msgspec.Meta(min_length=1)]
    max_tokens: Annotated[int, msgspec.Meta(ge=1)]


ID_MAX = 100  # characters: an id names record files (ID.json, ID~sSEED.npz) well within a 255-byte file name
_ID_FORBIDDEN = set('/\\:*?"<>|@~')  # @ and ~ separate an id from its condition and seed in record keys
ID_RULE = (f"an id names files in references: 1 to {ID_MAX} characters, without spaces, control characters or any "
           'of / \\ : * ? " < > | @ ~, not starting with "."')
_FIELD_RULES = {
    "id": f"id must be a string; {ID_RULE}",
    "class": "class must be a string, e.g. chat",
    "messages": f"messages must be a non-empty list of {{role, content}} objects; role must be one of "
                f"{sorted(_ROLES)} and content a string",
    "max_tokens": "max_tokens must be a positive integer (a whole number of tokens, 1 or more; not true, 8.0 or "
                  '"8")',
}


def id_refusal(pid: str) -> str | None:
    """Why `pid` cannot name a prompt's files, or None."""
    unsafe = (not pid or len(pid) > ID_MAX or pid.startswith(".") or any(c in _ID_FORBIDDEN for c in pid)
              or any(not c.isprintable() or c.isspace() for c in pid))
    return f"id {pid[:60]!r}{'...' if len(pid) > 60 else ''} ({len(pid)} characters): {ID_RULE}" if unsafe else None


def _prompt(row: dict, where: str) -> Prompt:
    missing = [k for k in ("id", "class", "messages", "max_tokens") if k not in row]
    if missing:
        raise SuiteError(f"{where}: missing field(s) {', '.join(missing)}; "
                         "each prompt needs id, class, messages and max_tokens")
    if "seed" in row:  # looks like a setting, is none: each request's seed comes from the run's options
        raise SuiteError(f"{where}: a suite row sets no seed (got 'seed': {row['seed']!r}"[:200] + "); the run's "
                         "seed is --oracle-seed, a sampled run's per-request seeds --seeds N; remove the key")
    try:
        parsed = msgspec.convert(row, _Row, strict=True)
    except msgspec.ValidationError as exc:
        field = str(exc).rpartition("at `$.")[2].split("`")[0].split("[")[0].split(".")[0]
        rule = _FIELD_RULES.get(field, "each prompt needs id, class, messages and max_tokens")
        got = f"; got {row[field]!r}"[:200] if field in row else ""
        raise SuiteError(f"{where}: {rule}{got} ({exc})") from None
    pid = str(parsed.id)
    refusal = id_refusal(pid)
    if refusal:
        raise SuiteError(f"{where}: {refusal}")
    return Prompt(id=pid, klass=parsed.klass,
                  messages=tuple(dict(m) for m in row["messages"]),  # as written: a template may read more keys
                  max_tokens=parsed.max_tokens)
