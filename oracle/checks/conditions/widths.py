"""`--ladder` values: a list of widths (`1,2,4,8`) or a preset that names them (`every:N`, `edges:N`).

A width is how many requests the server holds in flight at once; each width asked is one ladder level. The
presets exist because the bugs users hit live between powers of two (a kernel bucket edge at 3, a batch that
parts at 9): `every:N` is each width 1..N, `edges:N` the first ten and each 2^k-1, 2^k, 2^k+1 up to N (the
boundary sizes vLLM's own batch-invariance test adds: 15, 16, 17).

    ladder_value("every:4")          # "every:4" (the option's value: plain text, so pytest-xdist can send it)
    parse_ladder("every:4").widths   # (1, 2, 3, 4)
    parse_ladder("edges:40").widths  # (1, ..., 10, 15, 16, 17, 31, 32, 33)
    never_tried(parse_ladder("1,2,4,8"))  # (3, 5, 6, 7)
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest


__all__ = ["EDGES_MAX", "EVERY_MAX", "LadderSpec", "edge_widths", "ladder_value", "never_tried", "parse_ladder"]

EVERY_MAX = 128  # every:N runs N levels, each its own waves: beyond this, name the edges or a list
EDGES_MAX = 1024  # the same cap as a listed level
_PRESETS = ("every", "edges")
_EXAMPLE = "e.g. --ladder 1,2,4,8, --ladder every:8 or --ladder edges:65"


@dataclass(frozen=True)
class LadderSpec:
    """The widths one `--ladder` value asks for, and how it asked: `preset` is "every:8" / "edges:65", "" for a
    plain list (whose gaps the report names)."""

    widths: tuple[int, ...]
    preset: str = ""

    @property
    def text(self) -> str:
        return self.preset or ",".join(map(str, self.widths))


def edge_widths(n: int) -> tuple[int, ...]:
    """1..10, then 2^k-1, 2^k, 2^k+1 for k >= 4, each up to n."""
    widths = set(range(1, min(n, 10) + 1))
    k = 4
    while (1 << k) - 1 <= n:
        widths.update(w for w in ((1 << k) - 1, 1 << k, (1 << k) + 1) if w <= n)
        k += 1
    return tuple(sorted(widths))


def _preset(value: str) -> LadderSpec:
    name, _, count = value.partition(":")
    cap = EVERY_MAX if name == "every" else EDGES_MAX
    try:
        n = int(count)
    except ValueError:
        raise pytest.UsageError(f"--ladder {value!r}: {name}:N needs a whole number of requests in flight after the "
                                f"colon, e.g. --ladder {name}:8") from None
    if not 1 <= n <= cap:
        why = (" (each width is a ladder level of its own: for a wider server use edges:N or a list)"
               if name == "every" else "")
        raise pytest.UsageError(f"--ladder {value!r}: N must be between 1 and {cap}{why}, e.g. --ladder {name}:8")
    widths = tuple(range(1, n + 1)) if name == "every" else edge_widths(n)
    return LadderSpec(widths, f"{name}:{n}")


def parse_ladder(value: str) -> LadderSpec:
    """The widths of a `--ladder` value; pytest.UsageError naming the fix for a bad one (exit 4)."""
    text = value.strip()
    if ":" not in text:
        return LadderSpec(ladder_levels(text))
    name = text.partition(":")[0].strip()
    if "," in text or name not in _PRESETS:
        raise pytest.UsageError(f"--ladder {value!r}: give either a list of widths or one preset, every:N (each "
                                f"width 1..N) or edges:N (1..10 and each 2^k-1, 2^k, 2^k+1 up to N), not both; "
                                f"{_EXAMPLE}")
    return _preset(text.replace(" ", ""))


def ladder_value(value: str) -> str:
    """`--ladder`'s `type=`: the value checked and written one way ("every:8", "1,2,4"); plain text, because
    pytest-xdist sends option values to its workers as they are."""
    return parse_ladder(value).text


def never_tried(spec: LadderSpec) -> tuple[int, ...]:
    """The widths between 1 and the largest that a plain list skips (the c1 run is width 1); () for a preset,
    whose gaps are its design, and for no ladder."""
    if spec.preset or not spec.widths:
        return ()
    asked = set(spec.widths) | {1}
    return tuple(w for w in range(1, spec.widths[-1] + 1) if w not in asked)


def ladder_levels(value: str) -> tuple[int, ...]:
    try:
        levels = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise pytest.UsageError(f"--ladder {value!r}: expected comma-separated concurrency levels, "
                                "e.g. --ladder 1,2,4,8") from None
    if not levels or levels[0] < 1 or levels[-1] > 1024:
        raise pytest.UsageError(f"--ladder {value!r}: levels must be between 1 and 1024, e.g. --ladder 1,2,4,8")
    return tuple(levels)
