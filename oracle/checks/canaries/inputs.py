"""The canary input files an option names (--haystack, --code-set), read and validated when the options are read,
so that a bad file is a usage error naming it and the fix before any request (never a failure after the suite ran).

    check_canary_inputs(settings)           # pytest.UsageError naming the file and the fix
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["check_canary_inputs"]

HAYSTACK_FIX = "give a UTF-8 text file, one haystack paragraph a line"
CODE_SET_FIX = "give a code-result set built by `python -m oracle.canary.code build`"


def check_canary_inputs(canary) -> None:
    """Refuse a --haystack or --code-set that the needle or code canary could not read."""
    if canary.haystack:
        refusal = _haystack_refusal(Path(canary.haystack))
        if refusal:
            raise pytest.UsageError(f"--haystack {canary.haystack}: {refusal}; {HAYSTACK_FIX}")
    if canary.code_set:
        refusal = _code_set_refusal(Path(canary.code_set))
        if refusal:
            raise pytest.UsageError(f"--code-set {canary.code_set}: {refusal}; {CODE_SET_FIX}")


def _haystack_refusal(path: Path) -> str | None:
    if not path.is_file():
        return "a folder, not a file" if path.is_dir() else "not a regular file"
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte {exc.start} is {path.read_bytes()[exc.start:exc.start + 1]!r})"
    if "\x00" in text:
        return "holds NUL bytes: a binary file, not text"
    if not any(line.strip() and not line.strip().startswith("#") for line in text.splitlines()):
        return "holds no text (only empty lines and # notes)"
    return None


def _code_set_refusal(path: Path) -> str | None:
    from oracle.canary.code import load_set

    if not path.is_file():
        return "a folder, not a file" if path.is_dir() else "not a regular file"
    from oracle.store.json_files import InputFileError

    try:
        items = load_set(path)
    except InputFileError as exc:  # the guarded reader's own words name the file, what is wrong and the fix
        raise pytest.UsageError(str(exc)) from None
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte {exc.start})"
    except ValueError as exc:  # json.JSONDecodeError, or a level that is not a number
        return f"not a code-result set ({type(exc).__name__}: {str(exc)[:120]})"
    except (KeyError, TypeError, AttributeError) as exc:  # valid JSON of another shape
        what = f"no {exc} field" if isinstance(exc, KeyError) else str(exc)[:120]
        return (f"valid JSON, but not a code-result set ({what}; expected {{\"items\": [{{\"id\", \"level\", "
                "\"program\", \"program_sha256\", \"expected\"}, ...]})")
    if not items:
        return "holds no items"
    return None
