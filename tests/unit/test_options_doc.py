"""docs/options.md is the options reference: every option declared in oracle/ has a row there, every row names
a declared option, so an option added, renamed or dropped cannot leave the reference behind; each check kind's
options (its own --help group) are the rows of the section titled as that group."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oracle.checks import CHECKS
from oracle.gate.declarations import add_options

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


def sections() -> dict[str, list[str]]:
    """Heading (its words before any link) -> the options of its rows."""
    out: dict[str, list[str]] = {}
    for block in re.split(r"^## ", (REPO / "docs" / "options.md").read_text(), flags=re.M)[1:]:
        heading = block.splitlines()[0].split(" (")[0].strip()
        out[heading] = re.findall(r"^\| `(--[\w-]+)", block, re.M)
    return out


def test_each_check_kinds_options_are_the_rows_of_its_section():
    parser = pytest.Parser(_ispytest=True)
    add_options(parser)
    groups = {g.name: g for g in parser._groups}
    found = sections()
    for check in CHECKS:
        if check.add_options is None:
            continue
        heading = check.title[0].upper() + check.title[1:]
        declared_here = [o.names()[0] for o in groups[check.group].options]
        assert heading in found, f"add a section '## {heading}' to docs/options.md for {declared_here}"
        assert sorted(found[heading]) == sorted(declared_here), f"docs/options.md '## {heading}'"


def test_the_section_scan_reads_the_headings_and_rows():
    found = sections()
    assert "The target" in found and "--backend" in found["The target"]


def test_each_check_kinds_help_group_lists_its_options_in_the_order_of_its_section():
    """`pytest --help` and docs/options.md show a check kind's options in one order."""
    parser = pytest.Parser(_ispytest=True)
    add_options(parser)
    groups = {g.name: g for g in parser._groups}
    found = sections()
    for check in CHECKS:
        if check.add_options is not None:
            heading = check.title[0].upper() + check.title[1:]
            assert [o.names()[0] for o in groups[check.group].options] == found[heading], heading
