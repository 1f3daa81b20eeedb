"""`--sweep` values as axes, and the grid of points they make, in one deterministic order.

    axes = [parse_axis("-ctk=f16,q8_0"), parse_axis("-t=1,2")]
    points = grid(axes)        # 01 -ctk f16, -t 1; 02 -ctk f16, -t 2; 03 -ctk q8_0, -t 1; 04 -ctk q8_0, -t 2
    points[2].folder           # '03-ctk-q8_0_t-1'

An axis is a launch flag (`-ctk=f16,q8_0`, `--spec-draft-n-max=2,3`; `-ctk f16,q8_0` also reads), or an
environment variable in capitals (`OMP_NUM_THREADS=1,2`). The grid runs the axes in the order given, the last
one changing fastest (as nested loops read), each axis's values in the order given. A value of a secret-named
setting (`--api-key`, `HF_TOKEN`) is masked in every label and left out of folder names.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import pytest

from oracle.redaction import MASK, secret_name

__all__ = ["Axis", "Point", "Setting", "SweepUsageError", "grid", "parse_axis"]

_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
_FLAG_NAME = re.compile(r"--?[A-Za-z][A-Za-z0-9_.-]*")
_FOLDER_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")
EXAMPLE = "--sweep=-ctk=f16,q8_0 (a launch flag) or --sweep=OMP_NUM_THREADS=1,2 (an environment variable)"


class SweepUsageError(pytest.UsageError):
    """A --sweep the grid cannot be made of; the message names the fix (pytest exits 4)."""


@dataclass(frozen=True)
class Axis:
    kind: str  # "flag" (the launch command's, or --server-args for the embedded server) or "env"
    name: str  # "-ctk", "--spec-draft-n-max", "OMP_NUM_THREADS"
    values: tuple[str, ...]

    @property
    def secret(self) -> bool:
        return secret_name(self.name)


@dataclass(frozen=True)
class Setting:
    """One axis at one value."""

    kind: str
    name: str
    value: str

    @property
    def shown_value(self) -> str:
        return MASK if secret_name(self.name) else self.value

    @property
    def label(self) -> str:
        """`-ctk q8_0`, `OMP_NUM_THREADS=2` (a secret's value `***`)."""
        value = self.shown_value
        return f"{self.name} {value}" if self.kind == "flag" else f"{self.name}={value}"


@dataclass(frozen=True)
class Point:
    index: int  # 1-based, in grid order
    settings: tuple[Setting, ...]

    @property
    def label(self) -> str:
        return ", ".join(s.label for s in self.settings)

    @property
    def folder(self) -> str:
        """`03-ctk-q8_0_t-1`: its number, then each setting's name and value (a secret's value left out)."""
        parts = [f"{s.name.lstrip('-')}" + ("" if secret_name(s.name) else f"-{s.value}") for s in self.settings]
        words = "_".join(_FOLDER_UNSAFE.sub("-", p).strip("-") for p in parts)
        return f"{self.index:02d}-{words}"[:120]


def parse_axis(text: str) -> Axis:
    """One --sweep value; SweepUsageError naming the fix."""
    name, sep, rest = text.partition("=")
    if not sep or " " in name.strip():
        name, sep, rest = text.strip().partition(" ")
    name, rest = name.strip(), rest.strip()
    if not sep or not name or not rest:
        raise SweepUsageError(f"--sweep {text!r}: expected SETTING=V1,V2,..., e.g. {EXAMPLE}")
    if name.startswith("-"):
        if not _FLAG_NAME.fullmatch(name):
            raise SweepUsageError(f"--sweep {text!r}: {name!r} is not a flag name; write it as the server takes it, "
                                  f"e.g. {EXAMPLE}")
        kind = "flag"
    elif _ENV_NAME.fullmatch(name):
        kind = "env"
    else:
        raise SweepUsageError(
            f"--sweep {text!r}: {name!r} is neither a flag (it starts with '-') nor an environment variable (in "
            f"capitals); for the flag write --sweep=-{name}={rest}: the '=' after --sweep keeps a value that starts "
            "with '-' from being read as an option of its own")
    values = [v.strip() for v in rest.split(",")]
    if any(not v for v in values):
        raise SweepUsageError(f"--sweep {text!r}: an empty value; list the values separated by single commas, "
                              f"e.g. {EXAMPLE}")
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:
        raise SweepUsageError(f"--sweep {text!r}: the value {twice[0]!r} is listed twice; list each value once")
    return Axis(kind, name, tuple(values))


def grid(axes: list[Axis] | tuple[Axis, ...]) -> list[Point]:
    """Every combination of the axes' values, the last axis changing fastest; SweepUsageError for an axis given
    twice."""
    names = [a.name for a in axes]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SweepUsageError(f"--sweep names {twice[0]} more than once: give all its values in one --sweep, "
                              f"e.g. --sweep={twice[0]}=A,B")
    combos = itertools.product(*[[Setting(a.kind, a.name, v) for a in [axis] for v in axis.values] for axis in axes])
    return [Point(k, tuple(c)) for k, c in enumerate(combos, start=1)]
