"""The `speed-cells` item (--speed-cells): the cells measured after the c1 run (speed/campaign.py) and judged.
The producer returns a Finding and never writes the report.

    cells = CellsCheck(plan, recorder, prompts, state, context)
    cells.check().check.verdict     # pass / fail / inconclusive

pass: every cell that fits the server's context measured, each repeat proven cold, each prompt of exactly the
asked length (the server's own count), each completion of the asked length; fail: a cell reused the prefix cache,
a sample came back short (a cap or an early stop: the cell does not measure what it names),
a prompt the server counted otherwise, or a failed request; inconclusive (kind speed): cache-zero not proven (no
counters), timestamps not credible, or no cell fitted the context. A dropped cell (beyond the context) passes,
listed in the notes.
"""

from __future__ import annotations

from oracle.canary.needle import load_haystack
from oracle.compare.verdicts import FAIL, INCONCLUSIVE, PASS, Check
from oracle.gate.primary import not_run
from oracle.gate.registry import Finding
from oracle.speed.campaign import DROPPED, MEASURED, measure_cells, reference_ratios
from oracle.speed.cells import Cell
from oracle.speed.credible import NOT_CREDIBLE

__all__ = ["CellsCheck"]

CID = "speed-cells"


def _problems(name: str, cell: dict) -> tuple[list[str], list[str]]:
    """(reasons to fail, reasons it is inconclusive) of one cell."""
    if cell["status"] != MEASURED:
        return ([f"{name}: {cell['status']}: {cell['reason']}"] if cell["status"] != DROPPED else []), []
    fail, unsure = [], []
    cache = cell["cache"]
    if cache["verdict"] == FAIL:
        fail.append(f"{name}: not cold: {cache['detail']}")
    elif cache["verdict"] != PASS:
        unsure.append(f"{name}: {cache['detail']}")
    if cell["short"]:
        got = sorted({s["generated"] for s in cell["samples"] if s["short"]})
        fail.append(f"{name}: {cell['short']} of {len(cell['samples'])} sample(s) generated "
                    f"{', '.join(map(str, got))} of {cell['gen_tokens']} tokens (something between oracle and the "
                    "model capped or ended the generation: a gateway's max-tokens cap, a server that ignores "
                    "ignore_eos; lift the cap, or give a shorter cell)")
    if cell["prompt_mismatch"]:
        said = sorted({s["server_prompt_tokens"] for s in cell["samples"] if s["prompt_exact"] is False})
        fail.append(f"{name}: the server counted {', '.join(map(str, said))} prompt tokens, not "
                    f"{cell['prompt_tokens']}")
    if not cell["unique_prefixes"]:
        fail.append(f"{name}: two requests shared a prefix")
    if cell["credible"]["verdict"] == NOT_CREDIBLE:
        unsure.append(f"{name}: timestamps not credible: {cell['credible']['reasons'][0]}")
    return fail, unsure


def _words(name: str, cell: dict) -> str:
    s = cell.get("summary")
    if cell["status"] != MEASURED or not s:
        return f"{name} {cell['status']}"
    return f"{name} {cell['measures']} median {s['median']:g} tok/s [{s['min']:g}, {s['max']:g}]"


class CellsCheck:
    def __init__(self, plan, recorder, prompts, state, context) -> None:
        self.plan, self.recorder, self.prompts, self.state, self.context = plan, recorder, prompts, state, context
        self.meter = None  # an energy meter (start(), stop() -> dict) read around each cell's repeats, when set

    def _keep(self, block: dict) -> None:
        """After each cell, as the recorder after each record: the partial report holds the cells finished so far."""
        self.state.speed_cells = block
        self.recorder.report.write()

    def check(self) -> Finding:
        if not self.state.complete:
            return not_run(self.state, CID, "speed")
        o = self.plan.options
        cells = [Cell(p, g) for p, g in o.speed_cells]
        block = measure_cells(self.recorder.backend, cells, o.speed_repeats, tokenize=self.prompts.tokenize,
                              haystack=load_haystack(o.canary.haystack), context=self.context, seed=o.seed,
                              meter=self.meter, on_cell=self._keep)
        reference = self.plan.reference
        ref_cells = ((reference.manifest.get("speed") or {}).get("cells")) if reference is not None else None
        versus = reference_ratios(block, ref_cells)
        if versus is not None:
            block["vs_reference"] = versus
        notes = []
        dropped = [n for n, c in block["cells"].items() if c["status"] == DROPPED]
        if dropped:
            notes.append(f"speed cells dropped, beyond the server's context of {block['context']} tokens (not "
                         f"sent): {', '.join(dropped)}")
        if block["fixed_length_missing"]:
            notes.append(f"speed cells: {block['fixed_length_missing']}")
        fail, unsure = [], []
        for name, cell in block["cells"].items():
            f, u = _problems(name, cell)
            fail, unsure = fail + f, unsure + u
        measured = [n for n, c in block["cells"].items() if c["status"] == MEASURED]
        said = "; ".join(_words(n, c) for n, c in block["cells"].items())
        head = f"{len(measured)} cell(s) x {o.speed_repeats} cold repeat(s)"
        evidence = {"cells": {n: c["status"] for n, c in block["cells"].items()}, "repeats": o.speed_repeats}
        report = {"speed_cells": block, "notes": notes}
        if fail:
            check = Check(CID, "speed", FAIL, f"{len(fail)} problem(s) in the speed cells: {fail[0]}",
                          [f"  {x}" for x in fail[1:] + unsure], evidence)
        elif unsure or not measured:
            why = unsure[0] if unsure else f"no cell fits the server's context of {block['context']} tokens"
            check = Check(CID, "speed", INCONCLUSIVE, f"speed cells not proven: {why}",
                          [f"  {x}" for x in unsure[1:]], evidence)
        else:
            check = Check(CID, "speed", PASS, f"{head}, every repeat cold, prompts of exact length: {said}",
                          [], evidence)
        return Finding(check, report)
