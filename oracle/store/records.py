"""Records: one request's full result, and how it is kept on disk.

A record is two files under a condition folder (``boot1-c1/``): ``ID.json`` for the
scalars and ``ID.npz`` for the arrays. Writes are atomic (temp file + rename).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import zipfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from oracle.redaction import public_text
from oracle.store.json_files import InputFileError, bad_file, read_json
from oracle.store.shapes import RecordShape

__all__ = ["Condition", "PRIMARY", "RECORD_FIX", "REPEAT", "Record", "RecordKey", "atomic_write_bytes",
           "atomic_write_text", "load_record", "save_record", "token_sha256"]


@dataclass(frozen=True)
class Condition:
    """What varies between runs: the boot index, the concurrency level, and the pass within them.

    Keys: ``boot1-c1`` (the primary run), ``boot1-c1-r2`` (its repeat in the same boot),
    ``boot1-c8`` (ladder level 8), ``boot2-c1`` (the suite after one restart), ``boot1-c2-n9`` (each prompt beside
    an unrelated request of 9 prompt tokens).
    """

    boot: int = 1
    concurrency: int = 1
    run: int = 1
    neighbour: int = 0  # the prompt length of an unrelated request sent beside each prompt (`--neighbours`)

    @property
    def key(self) -> str:
        base = f"boot{self.boot}-c{self.concurrency}"
        base = base if self.run == 1 else f"{base}-r{self.run}"
        return base if not self.neighbour else f"{base}-n{self.neighbour}"

    @classmethod
    def from_key(cls, key: str) -> "Condition":
        parts = key.split("-")
        extra = {p[0]: int(p[1:]) for p in parts[2:]}  # r2 (a repeat), n9 (beside a 9-token neighbour)
        return cls(boot=int(parts[0][4:]), concurrency=int(parts[1][1:]), run=extra.get("r", 1),
                   neighbour=extra.get("n", 0))


PRIMARY = Condition()  # boot1-c1: the run every other condition is compared with
REPEAT = Condition(run=2)  # boot1-c1-r2: the primary run repeated in the same boot (ladder level 1)


@dataclass(frozen=True)
class RecordKey:
    """Which record: its key (prompt id, or id~N for the N-th copy in a level), its condition and, in a merged
    report, the server that ran it when that server was not the prompt's owner. Written as `id@condition`."""

    record: str
    condition: Condition
    server: str | None = None

    def __str__(self) -> str:
        return f"{self.record}@{self.condition.key}" + (f"@{self.server}" if self.server else "")

    @property
    def prompt(self) -> str:
        return self.record.partition("~")[0]

    def on(self, server: str | None) -> "RecordKey":
        return RecordKey(self.record, self.condition, server)

    @classmethod
    def parse(cls, text: str) -> "RecordKey":
        """The key as identity.json writes it (`str(key)`): the one place that reads that form back."""
        record, condition, server = (text.split("@") + [None])[:3]
        return cls(record, Condition.from_key(condition), server)

    @classmethod
    def of_meta(cls, meta: dict, server: str | None = None) -> "RecordKey":
        """The key of a record from its saved meta (`Record.meta()`)."""
        repeat = meta.get("repeat") or 0
        return cls(meta["id"] if not repeat else f"{meta['id']}~{repeat}", Condition.from_key(meta["condition"]),
                   server)


@dataclass
class Record:
    """One request's result. Logprob arrays have one row per completion position."""

    id: str
    condition: Condition
    prompt_ids: list[int]
    completion_ids: list[int]
    finish_reason: str
    text: str = ""
    logprobs: list[float] = field(default_factory=list)  # of the chosen token
    top_ids: list[list[int]] = field(default_factory=list)
    top_logprobs: list[list[float]] = field(default_factory=list)
    cached_prompt_tokens: int | None = None
    drafted: int | None = None
    accepted: int | None = None
    ttft_s: float | None = None
    token_times_s: list[float] = field(default_factory=list)  # since request start
    started_at: float = 0.0
    finished_at: float = 0.0
    repeat: int = 0  # the request's index in its condition when one prompt is sent more than once
    ids_source: str = "server"  # "text": the server returned no token ids, only its text can be compared
    tail_mass: list[float] = field(default_factory=list)  # 1 - sum of the top-k probabilities (full-vocab backends)
    server_timings: dict | None = None  # the server's own clock for the request (llama.cpp `timings`), when it said
    prompt_logprobs: list[float] = field(default_factory=list)  # log p(prompt[i] | prompt[:i]), i >= 1 (runners)
    logit_shift: list[float] = field(default_factory=list)  # raw logit = logprob + shift (whole-vocabulary rows)

    @property
    def key(self) -> str:
        """File name and report key: the prompt id, plus ~N for the N-th copy in a ladder level."""
        return self.id if self.repeat == 0 else f"{self.id}~{self.repeat}"

    @property
    def report_key(self) -> RecordKey:
        return RecordKey(self.key, self.condition)

    @classmethod
    def from_completion(cls, prompt_id: str, prompt_ids: list[int], condition: Condition, completion, *,
                        started_at: float, finished_at: float, repeat: int) -> "Record":
        """A record from a backend's Completion: every field they share is taken as it is."""
        shared = {f.name: getattr(completion, f.name) for f in fields(completion) if f.name in _RECORD_FIELDS
                  and f.name != "prompt_ids"}
        return cls(id=prompt_id, condition=condition, prompt_ids=list(prompt_ids), started_at=started_at,
                   finished_at=finished_at, repeat=repeat, **shared)

    @property
    def completion_sha256(self) -> str:
        return token_sha256(self.completion_ids)

    def meta(self) -> dict:
        d = asdict(self)
        for k in ("prompt_ids", "completion_ids", "logprobs", "top_ids", "top_logprobs", "token_times_s", "tail_mass",
                  "prompt_logprobs", "logit_shift"):
            d.pop(k)
        d["condition"] = self.condition.key
        d["prompt_sha256"] = token_sha256(self.prompt_ids)
        d["completion_sha256"] = self.completion_sha256
        d["text_sha256"] = hashlib.sha256(self.text.encode()).hexdigest()
        d["completion_tokens"] = len(self.completion_ids)
        return d


_RECORD_FIELDS = {f.name for f in fields(Record)}


def token_sha256(ids: list[int] | tuple[int, ...]) -> str:
    return hashlib.sha256(np.asarray(ids, dtype="<i8").tobytes()).hexdigest()


def _file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_FILE_MODE = _file_mode()  # what open() would give: temp files start at 0600


def atomic_write_bytes(path: Path, payload: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except OSError as exc:  # a full disk: name the file that was being written (a write error names none)
        Path(tmp).unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """A file oracle writes for people (report, manifest): nothing secret leaves the process (`public_text`).
    Records (ID.json, ID.npz) hold what the server returned, byte for byte, and go through atomic_write_bytes."""
    atomic_write_bytes(path, public_text(text).encode())


def _padded(rows: list[list], fill, dtype) -> np.ndarray:
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), width), fill, dtype=dtype)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def save_record(folder: Path, record: Record) -> list[Path]:
    """Write ID.npz and ID.json under folder/<condition>/; returns both paths."""
    base = folder / record.condition.key
    buf = io.BytesIO()
    # Only full-vocabulary backends know the tail mass; other records keep the file layout they always had.
    extra = {"tail_mass": np.asarray(record.tail_mass, dtype=np.float64)} if record.tail_mass else {}
    if record.prompt_logprobs:  # only backends that score the prompt itself (python runners)
        extra["prompt_logprobs"] = np.asarray(record.prompt_logprobs, dtype=np.float64)
    if record.logit_shift:  # only backends that hold raw logits and gave the whole vocabulary
        extra["logit_shift"] = np.asarray(record.logit_shift, dtype=np.float64)
    np.savez(
        buf,
        prompt_ids=np.asarray(record.prompt_ids, dtype=np.int64),
        completion_ids=np.asarray(record.completion_ids, dtype=np.int64),
        logprobs=np.asarray(record.logprobs, dtype=np.float32),
        top_ids=_padded(record.top_ids, -1, np.int64),
        top_logprobs=_padded(record.top_logprobs, -np.inf, np.float32),
        token_times_s=np.asarray(record.token_times_s, dtype=np.float64),
        **extra,
    )
    npz = base / f"{record.key}.npz"
    meta = base / f"{record.key}.json"
    atomic_write_bytes(npz, buf.getvalue())
    atomic_write_bytes(meta, (json.dumps(record.meta(), indent=1, sort_keys=True) + "\n").encode())
    return [npz, meta]


def load_record(folder: Path, condition: Condition, rid: str) -> Record:
    """rid: a record key (prompt id, or id~N for a copy). A record that is not what oracle writes (ID.json of
    another shape, ID.npz unreadable or of other arrays, the two disagreeing) is an InputFileError naming the
    file; a missing ID.json is FileNotFoundError (a folder without records)."""
    base = folder / condition.key
    if not (base / f"{rid}.json").is_file():
        raise FileNotFoundError(2, "no such record", str(base / f"{rid}.json"))
    meta = read_json(base / f"{rid}.json", RecordShape, fix=RECORD_FIX)
    npz = base / f"{rid}.npz"
    try:
        with np.load(npz, allow_pickle=False) as arrays:
            record = _record(meta, condition, {k: _array(arrays, k) for k in arrays.files if k in _ARRAYS})
    except InputFileError:
        raise
    except FileNotFoundError:
        raise bad_file(npz, "no such file (its ID.json is there)", RECORD_FIX) from None
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:  # TypeError: a .npy
        raise bad_file(npz, f"not a record's arrays ({type(exc).__name__}: {exc})", RECORD_FIX) from None
    if record.completion_sha256 != meta["completion_sha256"]:
        raise bad_file(base / f"{rid}.json", f"its completion_sha256 does not match the tokens in {npz.name}",
                             RECORD_FIX)
    return record


RECORD_FIX = "the record is damaged: restore it from where it was copied, or run the gate again to record it"
# The arrays of ID.npz: name -> (its dimensions, the kinds of number it holds).
_ARRAYS = {"prompt_ids": (1, "iu"), "completion_ids": (1, "iu"), "logprobs": (1, "f"), "top_ids": (2, "iu"),
           "top_logprobs": (2, "f"), "token_times_s": (1, "f"), "tail_mass": (1, "f"), "prompt_logprobs": (1, "f"),
           "logit_shift": (1, "f")}


def _array(arrays, name: str) -> np.ndarray:
    ndim, kinds = _ARRAYS[name]
    a = arrays[name]
    if a.ndim != ndim or a.dtype.kind not in kinds:
        raise ValueError(f"{name} is a {a.ndim}-dimensional {a.dtype} array, not {ndim}-dimensional "
                         f"{'whole numbers' if kinds == 'iu' else 'floats'}")
    return a


def _record(meta: dict, condition: Condition, arrays: dict[str, np.ndarray]) -> Record:
    for name in ("prompt_ids", "completion_ids", "logprobs", "top_ids", "top_logprobs", "token_times_s"):
        if name not in arrays:
            raise KeyError(f"{name} is missing")
    top_ids, top_lp = arrays["top_ids"], arrays["top_logprobs"]
    if top_ids.shape != top_lp.shape:
        raise ValueError(f"top_ids {top_ids.shape} and top_logprobs {top_lp.shape} differ in shape")
    keep = top_ids >= 0
    return Record(
        id=meta["id"],
        condition=condition,
        prompt_ids=arrays["prompt_ids"].tolist(),
        completion_ids=arrays["completion_ids"].tolist(),
        finish_reason=meta["finish_reason"],
        text=meta.get("text", ""),
        logprobs=arrays["logprobs"].tolist(),
        top_ids=[row[k].tolist() for row, k in zip(top_ids, keep)],
        top_logprobs=[row[k].tolist() for row, k in zip(top_lp, keep)],
        cached_prompt_tokens=meta.get("cached_prompt_tokens"),
        drafted=meta.get("drafted"),
        accepted=meta.get("accepted"),
        ttft_s=meta.get("ttft_s"),
        token_times_s=arrays["token_times_s"].tolist(),
        started_at=meta.get("started_at", 0.0),
        finished_at=meta.get("finished_at", 0.0),
        repeat=meta.get("repeat", 0),
        ids_source=meta.get("ids_source", "server"),
        tail_mass=arrays["tail_mass"].tolist() if "tail_mass" in arrays else [],
        server_timings=meta.get("server_timings"),
        prompt_logprobs=arrays["prompt_logprobs"].tolist() if "prompt_logprobs" in arrays else [],
        logit_shift=arrays["logit_shift"].tolist() if "logit_shift" in arrays else [],
    )
