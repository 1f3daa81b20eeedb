"""docs/options.md is the options reference: every option declared in oracle/ has a row there, every row names
a declared option, so an option added, renamed or dropped cannot leave the reference behind."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def declared() -> set[str]:
    return {name for path in (REPO / "oracle").rglob("*.py")
            for name in re.findall(r"""\baddoption\(\s*["'](--[\w-]+)["']""", path.read_text())}


def documented() -> list[str]:
    return re.findall(r"^\| `(--[\w-]+)", (REPO / "docs" / "options.md").read_text(), re.M)


def test_every_declared_option_has_a_row_and_every_row_a_declared_option():
    rows = documented()
    assert len(declared()) >= 40, sorted(declared())  # the regex still finds the declarations
    assert sorted(set(rows)) == sorted(rows), "an option has two rows in docs/options.md"
    assert not declared() - set(rows), f"add a row to docs/options.md for {sorted(declared() - set(rows))}"
    stale = sorted(set(rows) - declared())
    assert not stale, f"docs/options.md documents options oracle does not declare: {stale}"
