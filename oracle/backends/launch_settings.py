"""A server setting as its launch command gives it: a flag's value (`-ub 256`, `--ubatch-size=256`) or an
environment assignment in front of the program (`LLAMA_ARG_UBATCH=256 llama-server ...`, `env X=1 vllm ...`).

    launch_setting("exec env A=1 llama-server -ub 256", ("-ub", "--ubatch-size"), ("LLAMA_ARG_UBATCH",))
    # ("256", "-ub 256 in the launch command")
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Mapping

__all__ = ["flag_values", "launch_setting"]

_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


def flag_values(words: list[str], flags: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """(flag, value) of every occurrence of these flags in an argument list, in order: `-c 4096` or
    `--ctx-size=4096`; the value None for a flag that ends the list."""
    out = []
    for i, word in enumerate(words):
        name, eq, rest = word.partition("=")
        if name in flags:
            out.append((name, rest if eq else (words[i + 1] if i + 1 < len(words) else None)))
    return out


def launch_setting(command: str | None, flags: tuple[str, ...], env_names: tuple[str, ...] = (), *,
                   environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """(value, where it was found) of the last of these flags, else of an environment assignment in the
    command, else of oracle's own environment (which a launched server inherits); None when none sets it (the
    server's own default then applies). A flag wins over the environment, as llama.cpp and vLLM take it."""
    if not command:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    found = None
    for name, value in flag_values(words, flags):
        if value is not None:
            found = (value, f"{name} {value} in the launch command")
    if found is not None:
        return found
    for word in words:
        match = _ASSIGNMENT.match(word)
        if match and match.group(1) in env_names:
            found = (match.group(2), f"{match.group(1)}={match.group(2)} in the launch command")
    if found is not None:
        return found
    environ = os.environ if environ is None else environ
    name = next((n for n in env_names if n in environ), None)
    if name is None:
        return None
    where = f"{name}={environ[name]} in oracle's environment, which the launched server inherits"
    return environ[name], where
