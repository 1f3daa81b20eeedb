"""The report's sections, in the order identity.md and identity.html show them: the one list both documents
iterate. A section is a module with `markdown(data: dict) -> list[str]` and `html(data: dict) -> str`, both over
the identity.json dict (an empty list / "" when it has nothing to say); it lives next to its capability.

A new section: its module (e.g. `oracle/canary/crosstalk_report.py`) and one line here.
"""

from __future__ import annotations

from types import ModuleType

from oracle.canary import crosstalk_report as crosstalk
from oracle.canary import report as canaries
from oracle.logits import dvp_report as decode_vs_prefill
from oracle.logits import report as logits
from oracle.logits import runner_report as runner_checks
from oracle.report import evidence, grid, header, notes, servers
from oracle.report import coverage, sampling
from oracle.speed import cells_report as speed_cells
from oracle.speed import interleave_report as speed_ab
from oracle.speed import report as speed

__all__ = ["SECTIONS"]

SECTIONS: tuple[ModuleType, ...] = (
    header,  # verdict, headline counts, identity, the counts' Wilson intervals
    servers,  # pytest -n: one row per server
    grid,  # the verdict grid, splits and plots; the ladder levels and boots
    logits,  # KLD / Same top p against the reference, or the reference's floor
    decode_vs_prefill,  # --logits: the candidate's decode-time top-k against its own path scored as a prompt
    runner_checks,  # a python runner: chunked prefill against one pass, the mean prompt log-prob
    sampling,  # --temperature: settings, token match rate per condition, the distribution check
    speed,  # the speed card
    speed_cells,  # --speed-cells: each cell's cold repeats, warm-up, samples, against a reference's cells
    speed_ab,  # --reference-launch: the interleaved A/B session's passes, order and A/A control
    coverage,  # which conditions each run produced (chunked prefill, mixed batch, preemption, overlap)
    canaries,  # code, needle, repeats
    crosstalk,  # the contamination canary: each level's requests, which held another's content, where
    evidence,  # every check, cache-zero and speculation evidence
    notes,
)
