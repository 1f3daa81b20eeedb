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

With --reference-launch the cells run interleaved with the reference (speed/cells_ab.py, its servers in
interleave.py), and --min-speedup X is judged on the headline decode cell's between-run interval as the
speed item judges the suite's: fail when the whole interval is below X, inconclusive when it straddles X. With
--oracle-power each cell's repeats are metered (`meter`: a PowerWindow per cell, per side and repeat when interleaved).
"""

from __future__ import annotations

from oracle.canary.kinds import CANARY_CHECK
from oracle.canary.needle import load_haystack
from oracle.compare.verdicts import FAIL, INCONCLUSIVE, NOT_RUN, PASS, Check
from oracle.checks.descriptor import Finding, not_run
from oracle.checks.speed_cells.interleave import CellSides
from oracle.speed.campaign import DROPPED, MEASURED, measure_cells, reference_ratios
from oracle.speed.cells import DECODE, Cell
from oracle.speed.cells_ab import measure_cells_interleaved
from oracle.speed.credible import NOT_CREDIBLE
from oracle.speed.noise import NOISE_FLOOR, judge, noise_band, ratio_words
from oracle.speed.power import PowerWindow
from oracle.speed.validity import HEADLINE
from oracle.targets import TargetError

__all__ = ["CellsCheck", "headline_cell", "meter", "speedup"]

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


def _ratio_words(name: str, v: dict) -> str:
    if v.get("median") is None:
        return f"{name} {v['label']} ({(v['reasons'] or ['no interval'])[0]})"
    lo, hi = v["ci95"]
    return (f"{name} {ratio_words(v['median'])} [{lo:.2f}, {hi:.2f}] (ratio of medians {v['ratio_of_medians']:.2f}: "
            f"{v['candidate_median']:g} vs {v['reference_median']:g} tok/s, {v['pairs']} paired repeats "
            f"{v['measured']}, {v['label']})")


def headline_cell(block: dict) -> str | None:
    """The cell --min-speedup is judged on: the first decode cell (in the order given) measured on both sides."""
    return next((n for n, c in block["cells"].items()
                 if c["status"] == MEASURED and c["measures"] == DECODE and c.get("vs_reference")), None)


def speedup(block: dict, bar: float | None, floor: float = NOISE_FLOOR) -> tuple[str, str] | None:
    """(verdict, words) of --min-speedup on the headline decode cell's between-run interval: fail when the whole
    interval is below the bar, pass when it is at or above, else inconclusive (as when the cell's comparison is not a
    headline). None: nothing to judge (no bar, or the cells were not interleaved: no interval)."""
    if bar is None or "interleaved" not in block:
        return None
    name = headline_cell(block)
    if name is None:
        return INCONCLUSIVE, f"--min-speedup {bar:g} not judged on the cells: no decode cell measured on both sides"
    v = block["cells"][name]["vs_reference"]
    said = f"{_ratio_words(name, v)}, the headline decode cell; --min-speedup {bar:g}"
    if v["label"] != HEADLINE or v.get("ci95") is None:
        return INCONCLUSIVE, f"{said} not judged"
    verdict, why = judge(v, bar=bar, band=noise_band(None, floor))  # inside the floor's band: not judged
    if verdict == INCONCLUSIVE and not why.startswith("inconclusive: "):
        why += " (more repeats, or a clearer difference, would settle it)"
    return verdict, f"{said}: {why}"


def meter(power: str, identity: dict):
    """--oracle-power: an energy window (speed/power.py) around each cell's repeats, on the server the backend talks to."""
    def open_window(backend) -> PowerWindow:
        return PowerWindow.open(power, identity, url=backend.base_url,
                                in_process=backend.capabilities.in_process)
    return open_window


class CellsCheck:
    def __init__(self, plan, recorder, prompts, state, context, target) -> None:
        self.plan, self.recorder, self.prompts, self.state, self.context = plan, recorder, prompts, state, context
        self.target = target

    def _keep(self, block: dict) -> None:
        """After each cell, as the recorder after each record: the partial report holds the cells finished so far."""
        self.state.apply({"speed": {"cells": block}})
        self.recorder.report.write()

    def _measure(self, cells: list) -> tuple[dict | None, str | None]:
        """The cells' block: interleaved with the reference when --reference-launch is on, else the candidate's
        alone; and why the run stops (a server that did not start or come back), or None."""
        o, own = self.plan.options, self.plan.options.check("speed_cells")
        kw = dict(tokenize=self.prompts.tokenize, haystack=load_haystack(o.check(CANARY_CHECK).haystack), context=self.context,
                  seed=o.seed, meter=meter(o.check("speed").power, self.state.identity))
        interleave = o.check("speed_ab")
        if not interleave.on:
            return measure_cells(self.recorder.backend, cells, own.repeats, on_cell=self._keep, **kw), None
        sides, block, error = CellSides(self.plan, self.recorder, self.prompts, self.target), None, None
        try:
            block = measure_cells_interleaved(sides, cells, own.repeats, servers=interleave.servers,
                                              on_pass=self._keep, **kw)
        except TargetError as exc:
            error = f"{CID}: {exc}"
        finally:
            sides.close()
        return block, error or sides.candidate_back(self.state)

    def check(self) -> Finding:
        if not self.state.complete or self.state.interruption:
            return not_run(self.state, CID, "speed")
        own, speed = self.plan.options.check("speed_cells"), self.plan.options.check("speed")
        cells = [Cell(p, g) for p, g in own.cells]
        block, error = self._measure(cells)
        if error:
            stopped = f"{error}. The run stops here; no request was retried"
            return Finding(Check(CID, "speed", NOT_RUN, f"not run: {stopped}"),
                           {"interruption": stopped} | ({"speed": {"cells": block}} if block else {}))
        reference = self.plan.reference
        ref_cells = ((reference.manifest.get("speed") or {}).get("cells")) if reference is not None else None
        versus = None if "interleaved" in block else reference_ratios(block, ref_cells)
        if versus is not None:
            block["vs_reference"] = versus
        notes = []
        dropped = [n for n, c in block["cells"].items() if c["status"] == DROPPED]
        if dropped:
            notes.append(f"speed cells dropped, beyond the server's context of {block['context']} tokens (not "
                         f"sent): {', '.join(dropped)}")
        if block["fixed_length_missing"]:
            notes.append(f"speed cells: {block['fixed_length_missing']}")
        if speed.min_speedup is not None and "interleaved" not in block:
            notes.append(f"speed cells: --min-speedup {speed.min_speedup:g} judged on the suite's speed only: the "
                         "reference's cells were measured in another run (no interval); --reference-launch "
                         "interleaves them")
        fail, unsure = [], []
        for name, cell in block["cells"].items():
            f, u = _problems(name, cell)
            fail, unsure = fail + f, unsure + u
        judged = speedup(block, speed.min_speedup, speed.noise_floor)
        if judged is not None and judged[0] != PASS:
            (fail if judged[0] == FAIL else unsure).insert(0, judged[1])
        measured = [n for n, c in block["cells"].items() if c["status"] == MEASURED]
        said = "; ".join(_words(n, c) for n, c in block["cells"].items())
        head = f"{len(measured)} cell(s) x {own.repeats} cold repeat(s)"
        lines = [f"  {_ratio_words(n, c['vs_reference'])}" for n, c in block["cells"].items()
                 if c.get("vs_reference")]
        evidence = {"cells": {n: c["status"] for n, c in block["cells"].items()}, "repeats": own.repeats,
                    "interleaved": "interleaved" in block, "min_speedup": speed.min_speedup,
                    "headline_cell": headline_cell(block) if "interleaved" in block else None}
        report = {"speed": {"cells": block}, "notes": notes}
        if fail:
            check = Check(CID, "speed", FAIL, f"{len(fail)} problem(s) in the speed cells: {fail[0]}",
                          [f"  {x}" for x in fail[1:] + unsure] + lines, evidence)
        elif unsure or not measured:
            why = unsure[0] if unsure else f"no cell fits the server's context of {block['context']} tokens"
            check = Check(CID, "speed", INCONCLUSIVE, f"speed cells not proven: {why}",
                          [f"  {x}" for x in unsure[1:]] + lines, evidence)
        else:
            passed = f"; {judged[1]}" if judged is not None else ""
            check = Check(CID, "speed", PASS, f"{head}, every repeat cold, prompts of exact length: {said}{passed}",
                          lines, evidence)
        return Finding(check, report)
