"""The speed section's state (identity.json `speed`): the card, the speed-ab item's additions to it and the speed
cells under `cells`, as the three speed checks' findings fill it; merged under pytest -n as every server's card,
split over every server started (one that sent nothing included); what a recorded reference keeps of it."""

from __future__ import annotations

from pathlib import Path

from oracle.checks import fresh_states, read_state
from oracle.checks.speed import SpeedState
from oracle.gate.merge import merge_workers
from oracle.report.state import ReportState
from oracle.speed.card import speed_card
from oracle.speed.figures import BYTES_ARRIVAL

CELLS = {"repeats": 3, "cells": {"p512/g1": {"status": "measured"}}}


def test_the_card_the_ab_session_and_the_cells_fill_one_section():
    state = SpeedState()
    state.apply("speed", {"label": "headline", "vs_reference": {"interval": "within-run"}})  # the primary run
    state.apply("speed", {"interleave": {"passes": []}})  # speed-ab, pass by pass
    state.apply("speed", {"interleave": {"passes": [1]}, "vs_reference": {"interval": "between-run"}})
    state.apply("speed", {"cells": CELLS})  # speed-cells
    assert state.to_json() == {"speed": {"label": "headline", "vs_reference": {"interval": "between-run"},
                                         "interleave": {"passes": [1]}, "cells": CELLS}}
    assert SpeedState.from_json(state.to_json()) == state


def test_cells_without_a_card_read_back_as_cells_alone():
    state = SpeedState()
    state.apply("speed", {"cells": CELLS})
    assert state.to_json() == {"speed": {"cells": CELLS}} and SpeedState.from_json(state.to_json()) == state
    assert SpeedState.from_json({"speed": None}) == SpeedState() == SpeedState.from_json({})


def _payload(index: int, card: dict | None, cells: dict | None = None) -> dict:
    state = ReportState(mode="run", backend="llamacpp", prompt_ids=["p"], complete=True, closed=True,
                        states=fresh_states())
    if card is not None:
        state.apply({"speed": card})
    if cells is not None:
        state.apply({"speed": {"cells": cells}})
    return {"server": index, "url": f"http://127.0.0.1:{9000 + index}", "owned": ["p"], "report_dir": "x",
            "state": state.as_json(), "condition_rows": {}}


def test_the_merged_card_is_split_over_every_server_started_one_that_sent_nothing_included():
    card = speed_card({}, reasons=[], clock=BYTES_ARRIVAL)
    merged = ReportState(mode="run", backend="llamacpp", states=fresh_states())
    merge_workers(merged, {0: _payload(0, card, CELLS), 1: _payload(1, card), 2: None}, workers=3,
                  root=Path("/r"), allow_mixed=False)
    speed = merged.states["speed"]
    assert "the prompts were split over 3 servers running at the same time" in speed.card["reasons"]
    assert speed.cells == CELLS  # the one worker that measured them
    back = read_state(merged.as_json()).states["speed"]
    assert back == speed


def test_a_recorded_reference_keeps_the_cards_facts_and_the_cells():
    state = SpeedState({"label": "diagnostic", "diagnostics": ["x"], "prompts": {"p": {}}, "summary": {}}, CELLS)
    kept = state.for_reference().blocks["speed"]
    assert kept["label"] == "diagnostic" and kept["cells"] == CELLS and "prompts" not in kept
    assert SpeedState().for_reference().blocks == {}  # no card: no `speed` block
    assert SpeedState(None, CELLS).for_reference().blocks == {"speed": {"cells": CELLS}}
