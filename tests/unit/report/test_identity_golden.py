"""identity.json is the same for the same run: a report with every section filled, read back into a
`ReportState` and written again, gives byte for byte the committed golden file, however the state is held inside
(read from JSON, or filled section by section as a run's producers fill it).

Regenerate only for a change to the report that docs/report-schema.md records:
    PYTHONPATH=tests/helpers:tests/unit/report python -c "from test_identity_golden import regenerate; regenerate()"
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import oracle.report.state as state_module
from oracle.checks import read_state
from oracle.report.state import ReportState
from full_report import FULL_REPORT, SECTIONS

GOLDEN = Path(__file__).parent / "golden" / "identity.json"
WRITTEN = "2026-01-02T03:05:06Z"


def _text(state: ReportState) -> str:
    return json.dumps(state.as_json(), indent=1, sort_keys=False, default=str) + "\n"  # as report/writer.py


def _read(data: dict) -> ReportState:
    return read_state(copy.deepcopy(data))  # every check kind's state typed again


def _filled() -> ReportState:
    """The same report as producers fill it: the run's core fields, then each section through `apply`."""
    state = read_state({k: v for k, v in FULL_REPORT.items() if k not in SECTIONS})
    for name, value in SECTIONS.items():
        if name != "determinism":
            state.apply({name: copy.deepcopy(value)})
    state.apply({"determinism": SECTIONS["determinism"]})
    return state


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch):
    monkeypatch.setattr(state_module, "_utc", lambda: WRITTEN)


def test_a_full_report_read_back_is_written_byte_for_byte_as_the_golden_file():
    assert _text(_read(FULL_REPORT)) == GOLDEN.read_text()


def test_a_report_filled_section_by_section_is_written_as_the_golden_file():
    assert _text(_filled()) == GOLDEN.read_text()


def test_the_golden_report_reads_back_to_itself():
    again = _read(json.loads(GOLDEN.read_text()))
    assert _text(again) == GOLDEN.read_text()


def test_every_section_of_the_golden_file_is_filled():
    """The planted report fills every section, so no section's serialisation goes unproven."""
    data = json.loads(GOLDEN.read_text())
    assert all(data[name] not in (None, {}, []) for name in SECTIONS)


def test_the_golden_test_can_fail():
    changed = copy.deepcopy(FULL_REPORT)
    changed["coverage"]["boot1-c1"]["chunked-prefill"]["held"] = True
    assert _text(_read(changed)) != GOLDEN.read_text()


def regenerate() -> None:
    state_module._utc = lambda: WRITTEN
    GOLDEN.write_text(_text(_read(FULL_REPORT)))
