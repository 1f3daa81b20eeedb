"""docs/families.md: every cell filled (yes with a test, or n/a with the reason), every named test exists."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FAMILIES = ["llamacpp", "vllm", "openai", "hf", "openvino"]


def _rows() -> list[list[str]]:
    lines = (REPO / "docs" / "families.md").read_text().splitlines()
    table = [line for line in lines if line.startswith("|")]
    assert [c.strip() for c in table[0].strip("|").split("|")] == ["capability", *FAMILIES]
    return [[c.strip() for c in line.strip("|").split("|")] for line in table[2:]]


def test_every_cell_is_yes_with_a_test_or_a_reason():
    rows = _rows()
    assert len(rows) == 9
    for row in rows:
        assert len(row) == 6, row
        for cell in row[1:]:
            assert re.fullmatch(r"yes \(tests/\S+::test_\w+\)|n/a: .+", cell), (row[0], cell)


def test_every_named_test_exists():
    named = {m for row in _rows() for cell in row[1:] for m in re.findall(r"(tests/\S+)::(test_\w+)", cell)}
    assert named
    for path, name in named:
        assert re.search(rf"^def {name}\(", (REPO / path).read_text(), re.M), f"{path}::{name} does not exist"
