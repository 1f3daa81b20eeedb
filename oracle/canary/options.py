"""Canary options, and which canary modules and needle lengths are collected (registered by plugin.py).

The context used to drop needle lengths comes from --context, else from what the target is
started with (`targets.planned_context`): never from a server query, so every pytest-xdist
worker collects the same items.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle.options import positive_int
from oracle.canary.needle import DEFAULT_DEPTHS, default_lengths, split_lengths
from oracle.targets import planned_context

__all__ = ["CANARY_KINDS", "canary_kinds", "needle_plan", "resolve_context"]

CANARY_KINDS = ("code", "needle", "repeats")
_FILES = {"test_code_result.py": "code", "test_needle.py": "needle", "test_repeats.py": "repeats"}


def _int_list(flag: str, *, low: int, high: int | None = None):
    def parse(value: str) -> str:
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
        return ",".join(map(str, out))
    return parse


def _kinds(value: str) -> str:
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    bad = [k for k in kinds if k not in CANARY_KINDS + ("none",)]
    if bad:
        raise pytest.UsageError(f"--canaries {value!r}: unknown canary {bad[0]!r}; known: {', '.join(CANARY_KINDS)}, none")
    return ",".join(kinds)


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("oracle-canaries", "oracle: objective canaries (code result, needle, repeats)")
    g.addoption("--canaries", metavar="KIND,...", type=_kinds, default="code,needle,repeats",
                help="canary families to collect: code, needle, repeats or none (default: all three)")
    g.addoption("--needle-lengths", metavar="N,...", type=_int_list("--needle-lengths", low=64), default=None,
                help="needle prompt lengths in tokens, template and question included; 1K = 1024 (default: "
                     "1K,2K,4K and the largest that fits the context)")
    g.addoption("--needle-depths", metavar="PCT,...", type=_int_list("--needle-depths", low=0, high=100),
                default=",".join(map(str, DEFAULT_DEPTHS)),
                help="needle depths in percent of the haystack (default: 0,25,50,75,100)")
    g.addoption("--context", metavar="N", type=positive_int("--context"), default=None,
                help="the server's context length, to drop needle lengths that do not fit (default: the "
                     "embedded default's -c and GGUF context_length, else 8192)")
    g.addoption("--repeats", metavar="N", type=positive_int("--repeats"), default=5,
                help="requests in the sequential and in the burst repeat canary (default: 5)")
    g.addoption("--canary-strict", action="store_true", default=False,
                help="fail wrong canary answers even without a reference (default: report them as information)")
    g.addoption("--haystack", metavar="PATH", default=None,
                help="haystack text file for the needle, one paragraph a line (default: the shipped one)")
    g.addoption("--code-set", metavar="PATH", default=None,
                help="code-result canary set (JSON built by `python -m oracle.canary.code build`) "
                     "(default: the shipped one)")


def canary_kinds(config: pytest.Config) -> tuple[str, ...]:
    return tuple(k for k in config.getoption("canaries").split(",") if k in CANARY_KINDS)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config):
    """With the gate on, canary modules of families not in --canaries are not collected."""
    if config.getoption("backend", None) is None:
        return None
    kind = _FILES.get(collection_path.name)
    if kind is not None and kind not in canary_kinds(config):
        return True
    return None


def resolve_context(config: pytest.Config) -> tuple[int, str]:
    """(context length, where it came from), without asking the server."""
    explicit = config.getoption("context")
    if explicit:
        return explicit, "--context"
    started_elsewhere = bool(config.getoption("url") or config.getoption("servers") or config.getoption("launch"))
    return planned_context(config.getoption("backend"), started_elsewhere=started_elsewhere,
                           server_args=config.getoption("server_args") or "", model=config.getoption("model"))


def needle_plan(config: pytest.Config) -> tuple[list[int], list[int], list[int], int, str]:
    """(lengths collected, lengths dropped, depths, context, context source)."""
    ctx, source = resolve_context(config)
    given = config.getoption("needle_lengths")
    lengths = [int(n) for n in given.split(",")] if given else default_lengths(ctx)
    fit, dropped = split_lengths(lengths, ctx)
    depths = [int(d) for d in config.getoption("needle_depths").split(",")]
    return fit, dropped, depths, ctx, source
