"""The one reader of every JSON file oracle reads back: a reference's manifest.json and records, a report's
identity.json, code sets, the outputs of sweeps and repros. Bytes that are not UTF-8, text that is not JSON and
JSON of another shape (a list where an object belongs, a missing key, a wrong type) are an `InputFileError` that
names the file, what is wrong and the fix; never a traceback.

    manifest = read_json(path / "manifest.json", ManifestShape, fix="re-record it with --record DIR")

The shapes are declared as msgspec structs; a file is checked against its shape and returned as the plain JSON
it holds (the readers past this edge keep their dicts, now known to hold what they read).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

__all__ = ["InputFileError", "MODEL_FILE_FIX", "bad_file", "read_json", "read_text", "validated"]

# A model folder's own JSON files (config.json, tokenizer_config.json), read by the in-process families.
MODEL_FILE_FIX = "the model folder is damaged: download or export the model again"


class InputFileError(ValueError):
    """A file oracle reads that cannot be used; the message names the file, what is wrong and the fix."""


def bad_file(path: Path | str, problem: str, fix: str) -> InputFileError:
    """The error for one file: `PATH: what is wrong; the fix`."""
    return InputFileError(f"{path}: {problem}; {fix}")


def read_text(path: Path, *, fix: str) -> str:
    """A text file's content: InputFileError when it is missing, not a file, unreadable or not UTF-8."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise bad_file(path, "no such file", fix) from None
    except IsADirectoryError:
        raise bad_file(path, "a folder, not a file", fix) from None
    except OSError as exc:
        raise bad_file(path, f"cannot be read ({exc.strerror or exc})", fix) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise bad_file(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})", fix) from None


def read_json(path: Path, shape: Any = dict, *, fix: str) -> Any:
    """The JSON `path` holds, checked against `shape` (a msgspec struct, or a type such as dict or list).

    Parsed by the standard parser, which reads the NaN and Infinity oracle's own reports may hold."""
    text = read_text(path, fix=fix)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise bad_file(path, f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
                             fix) from None
    except RecursionError:
        raise bad_file(path, "not valid JSON (nested too deeply to read)", fix) from None
    return validated(path, data, shape, fix=fix)


def validated(path: Path, data: Any, shape: Any, *, fix: str) -> Any:
    """`data` (JSON read from `path`) when it has `shape`; else InputFileError naming the field and the type."""
    try:
        msgspec.convert(data, type=shape, strict=True)
    except msgspec.ValidationError as exc:
        raise bad_file(path, f"not what oracle writes there: {_words(exc)}", fix) from None
    except RecursionError:
        raise bad_file(path, "not what oracle writes there: nested too deeply to read", fix) from None
    return data


def _words(exc: msgspec.ValidationError) -> str:
    """msgspec's message ("Expected `object`, got `array` - at `$.cases`") in the file's words."""
    what, _, where = str(exc).partition(" - at ")
    what = what.replace("`", "").replace("Expected ", "expected ").replace("Object missing required field ",
                                                                          "missing key ")
    where = where.replace("`", "")
    if where.startswith("key in "):
        where = "a key of " + where.removeprefix("key in ")
    return f"{what} at {where}" if where and where != "$" else what
