"""The README's verdict table (verdict -> outcome -> exit code) and docs/verdicts.md list the same verdicts,
so a verdict added to one cannot be missing from the other."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def verdicts(text: str) -> list[str]:
    """The first column of the first table whose header starts with `| verdict |`."""
    table = text[text.index("| verdict |"):].split("\n\n")[0].splitlines()
    return [row.split("|")[1].strip() for row in table[2:]]


def test_readme_and_docs_list_the_same_verdicts_with_exit_codes():
    readme = (REPO / "README.md").read_text()
    short, full = verdicts(readme), verdicts((REPO / "docs" / "verdicts.md").read_text())
    assert len(short) >= 10 and sorted(short) == sorted(full), (short, full)
    header = readme[readme.index("| verdict |"):].splitlines()[0]
    assert "exit code" in header and "outcome" in header, header
    for row in readme[readme.index("| verdict |"):].split("\n\n")[0].splitlines()[2:]:
        assert re.search(r"\| [0-4]\b[^|]*\|$", row), f"README verdict row without an exit code: {row}"
