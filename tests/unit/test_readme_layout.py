"""README.md reads in five minutes: at most 250 lines; its first screen (60 lines) says what oracle does,
installs it, runs the main job as two commands with a comment each and runs the tests; its contents list every
section."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
FIRST_SCREEN = 60


def block(text: str, marker: str) -> list[str]:
    m = re.search(rf"<!-- {marker} -->\n```bash\n(.+?)\n```", text, re.S)
    assert m, f"README has no bash block after <!-- {marker} -->"
    return m.group(1).splitlines()


def test_readme_is_short_and_its_first_screen_installs_runs_and_tests():
    text = README.read_text()
    lines = text.splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move details to docs/"
    screen = "\n".join(lines[:FIRST_SCREEN])
    assert "pip install" in screen
    for marker in ("main-job", "tests"):
        ends = "\n".join(block(text, marker)) + "\n```"
        assert ends in screen, f"the {marker} block ends after line {FIRST_SCREEN}"
    assert block(text, "tests") == ["pytest"]


def test_main_job_is_two_commands_each_under_its_comment():
    job = block(README.read_text(), "main-job")
    assert len(job) == 4 and [line.startswith("#") for line in job] == [True, False, True, False], job
    assert "--record" in job[1] and "--reference" in job[3], job


def test_contents_list_every_section():
    text = README.read_text()
    contents = text[text.index("## Contents"):].split("\n## ")[0]
    listed = re.findall(r"^- \[(.+?)\]\(#", contents, re.M)
    sections = re.findall(r"^## (.+)$", text[text.index("## Contents"):], re.M)[1:]
    assert listed == sections, (listed, sections)
