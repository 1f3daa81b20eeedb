"""Each check kind is one package behind its descriptor, listed once in CHECKS: the gate (oracle/gate/) is the
engine that reads the descriptors and names no check; each kind's options sit on its own --help group; its state
writes, reads back and merges exactly the identity.json keys it owns; its report section is a real section."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oracle.checks import CHECKS, STATE_TYPES, fresh_states, read_state
from oracle.option_declarations import add_options
from oracle.report.sections import SECTIONS
from oracle.report.state import SECTION_ORDER
from tests.helpers.full_report import FULL_REPORT

REPO = Path(__file__).resolve().parents[3]
GATE = REPO / "oracle" / "gate"


def _words(check) -> set[str]:
    names = {check.name, *check.kinds}
    return names | {n.replace("_", "-") for n in names}


def _named(text: str, words: set[str]) -> list[tuple[int, str]]:
    """(line, word) of each place a check's name or item kind appears, in code, strings or comments."""
    pattern = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, words))) + r")(?![\w-])")
    return [(i, m.group(1)) for i, line in enumerate(text.splitlines(), 1) for m in pattern.finditer(line)]


def test_the_gate_names_no_check():
    """A check's knowledge lives in its package (oracle/checks/<kind>/), never in the engine."""
    found = [f"{path.relative_to(REPO)}:{line}: {word}" for check in CHECKS for path in sorted(GATE.rglob("*.py"))
             for line, word in _named(path.read_text(), _words(check))]
    assert found == [], "move what the gate knows of these checks into their descriptors"


def test_the_scan_sees_a_check_named_in_code_or_a_comment():
    source = 'if kind == "coverage":  # the prompt-logprob item\n    specs.append(ItemSpec("x", "prompt_logprob"))\n'
    assert _named(source, {"coverage", "prompt-logprob", "prompt_logprob"}) == [
        (1, "coverage"), (1, "prompt-logprob"), (2, "prompt_logprob")]
    assert _named("from oracle.compare.coverage_rows import x\n", {"coverage"}) == []


def test_each_check_is_listed_once_and_its_kinds_are_its_own():
    names = [c.name for c in CHECKS]
    kinds = [k for c in CHECKS for k in c.kinds]
    assert len(set(names)) == len(names) and len(set(kinds)) == len(kinds)


def test_each_checks_options_are_on_its_own_help_group():
    parser = pytest.Parser()
    add_options(parser)
    groups = {g.name: g for g in parser._groups}
    for check in CHECKS:
        if check.add_options is None:
            continue
        group = groups[check.group]
        assert group._arggroup.title == f"oracle: {check.title}"
        assert group.options, f"{check.name}: an empty --help group"
        assert check.settings is not None and check.defaults is not None


def test_each_section_is_a_report_section():
    assert all(c.section in SECTIONS for c in CHECKS if c.section is not None)


def test_each_state_owns_its_keys_alone_and_reads_back_what_it_writes():
    owned = [k for t in STATE_TYPES.values() for k in t.KEYS]
    assert len(set(owned)) == len(owned), "two check states claim one identity.json key"
    for kind, state_type in STATE_TYPES.items():
        state = state_type.from_json(FULL_REPORT)
        written = state.to_json()
        assert set(written) == set(state_type.KEYS) and set(written) <= set(SECTION_ORDER) | set(owned)
        assert state_type.from_json(written) == state, kind
        assert written == {k: FULL_REPORT[k] for k in state_type.KEYS}, kind


def test_a_fresh_state_reads_an_old_report_without_its_keys():
    """A report of before a check existed reads back with that check's state empty."""
    old = {k: v for k, v in FULL_REPORT.items() if k not in {k for t in STATE_TYPES.values() for k in t.KEYS}}
    assert read_state(old).states == fresh_states()
