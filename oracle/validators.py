"""The generic validating types of oracle's options: each turns a command-line string into a plain value, or raises
pytest.UsageError whose message names the fix. A leaf: it imports no domain package, so every package that declares
options (the checks, the families, the gate, the tools) may use it.

    g.addoption("--max-tokens", type=positive_int("--max-tokens"), ...)
    g.addoption("--kld-max", type=bounded("--kld-max", "a Mean KLD in nats", "0.05", 0, 100), ...)
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from oracle.redaction import redact_command

__all__ = ["COUNT_MAX", "TOP_K_MAX", "bounded", "existing_path", "int_list", "integer", "non_negative_int",
           "one_of", "positive_int", "shell_command", "top_k"]


def _int_at_least(flag: str, least: int, expected: str, example: int, floor_words: str):
    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise pytest.UsageError(f"{flag} {value!r}: expected {expected}, e.g. {flag} {example}") from None
        if n < least:
            raise pytest.UsageError(f"{flag} {value!r}: must be {floor_words}")
        if n > COUNT_MAX:  # the servers keep their counts in 32 bits: a larger one would wrap or be refused there
            raise pytest.UsageError(f"{flag} {value!r}: must be at most {COUNT_MAX}, e.g. {flag} {example}")
        return n
    return parse


COUNT_MAX = 2**31 - 1  # the largest count a server takes (a signed 32-bit int in llama.cpp and vLLM's C++ parts)


def positive_int(flag: str):
    return _int_at_least(flag, 1, "a positive integer", 5, "at least 1")


# Top logprobs per position: the whole vocabulary at most (a runner's raw logit cosine asks for all of it). The
# largest vocabulary among the models gated here is 262144 (Gemma 3); the served one is checked at start
# (gate/session.py), before the first request.
TOP_K_MAX = 262144


def top_k(flag: str):
    """A count of top logprobs per position: at least 1, at most TOP_K_MAX (a record keeps an id and a logprob per
    entry at every position)."""
    parse_int = positive_int(flag)

    def parse(value: str) -> int:
        n = parse_int(value)
        if n > TOP_K_MAX:
            raise pytest.UsageError(f"{flag} {value!r}: more top logprobs per position than any vocabulary has "
                                    f"(at most {TOP_K_MAX}); the logits checks read 5 to 64, the whole vocabulary "
                                    f"is its size, e.g. {flag} 49152 for SmolLM2")
        return n
    return parse


def non_negative_int(flag: str):
    return _int_at_least(flag, 0, "a whole number", 1, "0 or more")


def integer(flag: str, example: int):
    """Any whole number (e.g. a seed)."""
    def parse(value: str) -> int:
        try:
            return int(value)
        except ValueError:
            raise pytest.UsageError(f"{flag} {value!r}: expected a whole number, e.g. {flag} {example}") from None
    return parse


def existing_path(flag: str, what: str):
    """A file (or folder) that must be there when the run starts; the message says what to give."""
    def parse(value: str) -> str:
        try:
            there = Path(value).exists()
        except OSError as exc:  # a name longer than the filesystem allows, a folder that cannot be looked into
            raise pytest.UsageError(f"{flag} {value[:60]}: cannot be looked at ({exc.strerror or exc}); give "
                                    f"{what}") from None
        if not there:
            raise pytest.UsageError(f"{flag} {value}: no such file or folder; give {what}")
        return value
    return parse


def bounded(flag: str, what: str, example: str, low: float, high: float, *, percent: bool = False):
    """A float option in [low, high] (high excluded unless percent); the message names an example."""
    def parse(value: str) -> float:
        try:
            x = float(value.rstrip("%") if percent else value)
        except ValueError:
            raise pytest.UsageError(f"{flag} {value!r}: expected {what}, e.g. {flag} {example}") from None
        if not (low <= x <= high if percent else low <= x < high):
            unit = "a percentage between" if percent else "between"
            raise pytest.UsageError(f"{flag} {value!r}: must be {unit} {low:g} and {high:g}"
                                    + ("" if percent else " nats"))
        return x
    return parse


def shell_command(flag: str):
    def parse(value: str) -> str:
        try:
            shlex.split(value)
        except ValueError as exc:
            raise pytest.UsageError(f"{flag} {redact_command(value)!r}: cannot split it as a shell command ({exc}); "
                                    "check the quotes") from None
        return value
    return parse


def int_list(flag: str, *, low: int, high: int | None = None):
    """Comma-separated integers in [low, high], 1K = 1024, as a tuple."""
    def parse(value: str) -> tuple[int, ...]:
        out = []
        for part in (p.strip() for p in value.split(",") if p.strip()):
            mult = 1024 if part[-1:] in "kK" else 1
            try:
                n = int(part[:-1] if mult > 1 else part) * mult
            except ValueError:
                raise pytest.UsageError(f"{flag} {value!r}: expected comma-separated integers, e.g. {flag} "
                                        f"{'1K,2K,4K' if flag == '--needle-lengths' else '0,50,100'}") from None
            if n < low or (high is not None and n > high):
                raise pytest.UsageError(f"{flag} {value!r}: {part} is out of range ({low}..{high or 'max'})")
            out.append(n)
        if not out:
            raise pytest.UsageError(f"{flag}: give at least one value")
        return tuple(out)
    return parse


def one_of(flag: str, choices: tuple[str, ...], words: str):
    """A value that must be one of `choices`; the refusal is `FLAG 'VALUE': WORDS`, WORDS saying what each choice
    means (e.g. "must be cycle (...) or same (...)")."""
    def parse(value: str) -> str:
        if value not in choices:
            raise pytest.UsageError(f"{flag} {value!r}: {words}")
        return value
    return parse
