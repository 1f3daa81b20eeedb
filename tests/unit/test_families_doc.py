"""docs/families.md: a column for every registered family (read from the registry, not listed here), every
cell filled (yes with a test, or n/a with the reason), every named test exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oracle.backends import FAMILIES, CacheEvidence, Capabilities, FamilyDescriptor
from oracle.backends.base import BackendBase

REPO = Path(__file__).resolve().parents[2]
CAPABILITIES = 10  # the table's rows


def family_table(text: str) -> tuple[list[str], list[list[str]]]:
    """(the families the header names, the rows of cells) of the families table."""
    table = [line for line in text.splitlines() if line.startswith("|")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    assert header[0] == "capability", header
    return header[1:], [[c.strip() for c in line.strip("|").split("|")] for line in table[2:]]


def check_families_doc(text: str) -> list[list[str]]:
    """AssertionError unless the table has one column per family registered now, and each row a cell each."""
    columns, rows = family_table(text)
    missing = [name for name in FAMILIES if name not in columns]
    assert not missing, f"docs/families.md has no column for the registered famil(ies) {missing}: add one"
    unknown = [name for name in columns if name not in FAMILIES]
    assert not unknown, f"docs/families.md has a column for {unknown}, which is not registered"
    assert len(columns) == len(set(columns)), columns
    for row in rows:
        assert len(row) == len(columns) + 1, row
    return rows


def _doc() -> str:
    return (REPO / "docs" / "families.md").read_text()


def test_every_registered_family_has_a_column():
    check_families_doc(_doc())


def test_every_cell_is_yes_with_a_test_or_a_reason():
    rows = check_families_doc(_doc())
    assert len(rows) == CAPABILITIES
    for row in rows:
        for cell in row[1:]:
            assert re.fullmatch(r"yes \(tests/\S+::test_\w+\)|n/a: .+", cell), (row[0], cell)


def test_every_named_test_exists():
    named = {m for row in check_families_doc(_doc()) for cell in row[1:]
             for m in re.findall(r"(tests/\S+)::(test_\w+)", cell)}
    assert named
    for path, name in named:
        assert re.search(rf"^def {name}\(", (REPO / path).read_text(), re.M), f"{path}::{name} does not exist"


def _with_column(doc: str, name: str) -> str:
    """The doc with a column for `name` added: header, rule, one n/a cell per row."""
    table = [line for line in doc.splitlines() if line.startswith("|")]
    cells = {table[0]: f" {name} |", table[1]: " --- |"}
    return "\n".join(line + cells.get(line, " n/a: a test family |") if line.startswith("|") else line
                     for line in doc.splitlines())


class _SixthBackend(BackendBase):
    family = "sixth"
    capabilities = Capabilities(cache=CacheEvidence(policy="none", counters_hint="none"))


def test_a_registered_family_without_a_column_fails_the_check(monkeypatch):
    """The check reads the registry: a sixth family registered (for this test only) and given no column in the
    doc fails it, naming the family; the same doc with its column passes."""
    sixth = FamilyDescriptor(name="sixth", help="a test", backend=_SixthBackend)
    monkeypatch.setitem(FAMILIES, "sixth", sixth)
    with pytest.raises(AssertionError, match=r"no column for the registered famil\(ies\) \['sixth'\]"):
        check_families_doc(_doc())
    rows = check_families_doc(_with_column(_doc(), "sixth"))
    assert all(row[-1] == "n/a: a test family" for row in rows)
