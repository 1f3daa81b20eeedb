"""Speed cells interleaved with the reference (--speed-cells with --reference-launch): each cell's repeats sent to
the reference (A) and the candidate (B) alternately, in ABBA order over the repeats, so each cell gets a ratio with a
between-run interval.

    block = measure_cells_interleaved(sides, cells, 3, servers="both-up", tokenize=..., haystack=..., context=...)
    block["cells"]["p512/g128"]["vs_reference"]     # ratio of medians, the paired t interval, label
    block["cells"]["p512/g128"]["reference"]        # the reference side's cell block (samples, cache, energy)

`sides.open(side)` gives the side's backend for its next pass and the boot it runs on (`one-at-a-time`: a fresh boot
per pass, the other side stopped; `both-up`: the running server, boot None); `sides.candidate` is the candidate's
backend as the session holds it (its capabilities head the block); `sides.tokenizer(backend)` tokenizes the side's
prefixes (the run's local tokenizer, else the side's own server: in one-at-a-time the other one is down). The haystack
is tokenized once, by the candidate, before the first pass. The same rules hold on both sides: one same-shape
warm-up per cell on each boot of each side (discarded, shown), every request opening with its own entropy-first
prefix (the side's own run nonce), the server's counters read around every repeat (cache-zero, the generated-token
evidence), the energy meter opened around every repeat (`meter(backend)`, each side's windows summed apart).

The schedule. both-up: cell after cell, each cell's repeats alternating A B, B A, A B, ... (the pair of a repeat is
back to back). one-at-a-time: round after round (repeat k of every cell in one pass on one boot), the rounds in ABBA
order, as the speed-ab item's passes: a boot per pass, not per request.

The interval (speed/interleave.py's method, documented in docs/speed.md): repeat k of the candidate and repeat k of
the reference are a pair; the pairs' log ratios ln(B_k / A_k) give Student's t 95% interval of their mean, taken back
by exp. The point shown beside it is the ratio of the two sides' medians over the repeats (`ratio_of_medians`);
`median` is the interval's centre (the geometric mean of the paired ratios), the figure --min-speedup is judged on.
"""

from __future__ import annotations

from oracle.backends import RequestFailed
from oracle.speed.campaign import (DROPPED, FAILED, MEASURED, NOT_RUN, Sender, add_counters, beyond, block_head,
                                   cell_head, judge_cell, warmup_json)
from oracle.speed.cell_energy import cell_energy, combine_energy
from oracle.speed.cells import haystack_ids
from oracle.speed.credible import NOT_CREDIBLE
from oracle.speed.interleave import BETWEEN_RUN, CANDIDATE, REFERENCE, abba_order, between_run_ratio
from oracle.speed.validity import DIAGNOSTIC, HEADLINE, INSUFFICIENT

__all__ = ["INTERLEAVED", "METHOD", "cell_versus", "measure_cells_interleaved", "schedule"]

INTERLEAVED = "interleaved"
METHOD = ("Student t 95% interval over the paired repeats' log ratios ln(candidate_k / reference_k), ABBA order; "
          "point: ratio of the medians over the repeats")


def schedule(cells: list, repeats: int, servers: str) -> list[tuple[int, str, list]]:
    """[(repeat, side, cells of the pass)] in the order sent (see the module's words)."""
    rounds = list(enumerate(abba_order(repeats, REFERENCE, CANDIDATE), start=1))
    if servers == "both-up":
        return [(k, side, [cell]) for cell in cells for k, order in rounds for side in order]
    return [(k, side, list(cells)) for k, order in rounds for side in order]


class _Side:
    """One side's samples, records, counter deltas, energy windows and warm-ups, per cell."""

    def __init__(self, sender: Sender) -> None:
        self.sender = sender
        self.samples: dict[str, list] = {}
        self.records: dict[str, list] = {}
        self.delta: dict[str, object] = {}
        self.energy: dict[str, list] = {}
        self.warmups: dict[str, list] = {}
        self.warmed: set = set()  # (boot, cell) pairs warmed up
        self.backend = None


def _repeat(side: _Side, cell, k: int, meter) -> None:
    backend = side.backend
    before = backend.counters()
    window = meter(backend) if meter is not None else None
    if window is not None:
        window.start()
    try:
        sample, record = side.sender.send(cell, k)
    finally:
        if window is not None:
            window.close()
    after = backend.counters()
    if window is not None:
        side.energy.setdefault(cell.name, []).append(cell_energy(*window.stop(generated_tokens=sample["generated"])))
    delta = after.delta(before) if before is not None and after is not None else None
    side.samples.setdefault(cell.name, []).append(sample)
    side.records.setdefault(cell.name, []).append(record)
    side.delta[cell.name] = add_counters(side.delta.get(cell.name), delta) if cell.name in side.delta else delta


def _side_block(side: _Side, cell) -> dict:
    warm = side.warmups.get(cell.name) or []
    out = cell_head(cell)
    out["warmup"] = warmup_json(warm[0]) if warm else None
    out["warmups"] = len(warm)
    samples = side.samples.get(cell.name, [])
    out = judge_cell(out, side.backend, cell, samples, side.records.get(cell.name, []), side.delta.get(cell.name),
                     [w["prefix"] for w in warm] + [s["prefix"] for s in samples])
    if cell.name in side.energy:
        out["energy"] = combine_energy(side.energy[cell.name])
    return out


def _value(sample: dict) -> float | None:
    return None if sample["short"] else sample["value"]


def cell_versus(candidate: dict, reference: dict) -> dict:
    """One cell's interleaved comparison: the paired repeats' ratio and interval, the label (headline; not credible
    when either side's timestamps are not; diagnostic when either side's cache-zero is not proven; insufficient under
    two pairs)."""
    theirs = {s["repeat"]: _value(s) for s in reference["samples"]}
    pairs = [(_value(s), theirs.get(s["repeat"])) for s in candidate["samples"]]
    ratio = between_run_ratio([(c, r) for c, r in pairs if c and r])
    a, b = (candidate.get("summary") or {}).get("median"), (reference.get("summary") or {}).get("median")
    out = {"measured": INTERLEAVED, "interval": BETWEEN_RUN, "method": METHOD, "label": HEADLINE, "reasons": [],
           "candidate_median": a, "reference_median": b,
           "ratio_of_medians": round(a / b, 4) if a and b else None, "median": None, "ci95": None, "pairs": 0}
    if ratio is not None:
        out.update({k: ratio[k] for k in ("median", "ci95", "min", "max", "per_round", "t_quantile", "cv")},
                   pairs=ratio["rounds"], candidate_median=a, reference_median=b)
    for side, cell in ((CANDIDATE, candidate), (REFERENCE, reference)):
        if cell["credible"]["verdict"] == NOT_CREDIBLE:
            out["reasons"].append(f"{side}: timestamps not credible: {cell['credible']['reasons'][0]}")
    if out["reasons"]:
        out["label"] = NOT_CREDIBLE
        return out
    out["reasons"] = [f"{side}: cache-zero {cell['cache']['verdict']}: {cell['cache']['detail']}"
                      for side, cell in ((CANDIDATE, candidate), (REFERENCE, reference))
                      if cell["cache"]["verdict"] != "pass"]
    if ratio is None:
        out["reasons"].append(f"{len([p for p in pairs if p[0] and p[1]])} paired repeat(s) with a value on both "
                              "sides; an interval needs 2")
        out["label"] = INSUFFICIENT
    elif out["reasons"]:
        out["label"] = DIAGNOSTIC
    return out


def measure_cells_interleaved(sides, cells, repeats: int, *, servers: str, tokenize, haystack, context,
                              seed: int = 1234, meter=None, on_pass=None) -> dict:
    """identity.json's `speed.cells` with the reference interleaved: the candidate's cell blocks as measure_cells
    gives them, each with its `reference` side and `vs_reference`; `interleaved` holds the order of the passes.
    A failed request stops the session (never retried): that cell `failed`, every cell not finished `not run`.
    `on_pass(block)` after each pass (the partial report kept current)."""
    hay = haystack_ids(tokenize, haystack)
    ours = {s: _Side(Sender(sides.candidate, tokenize, hay, seed)) for s in (REFERENCE, CANDIDATE)}
    block = block_head(sides.candidate, repeats, context)  # the candidate's capabilities (its server is up now)
    block["nonce"] = {s: side.sender.nonce for s, side in ours.items()}
    block["interleaved"] = {"servers": servers, "order": [], "method": METHOD}
    kept = []
    for cell in cells:
        why = beyond(cell, context)
        if why is not None:
            block["cells"][cell.name] = {"status": DROPPED, "reason": why, "measures": cell.measures,
                                         "prompt_tokens": cell.prompt_tokens, "gen_tokens": cell.gen_tokens}
        else:
            kept.append(cell)
    passes = schedule(kept, repeats, servers)
    failed = None
    for k, side, pass_cells in passes:
        mine = ours[side]
        backend, boot = sides.open(side)
        mine.backend = mine.sender.backend = backend
        mine.sender.tokenize = sides.tokenizer(backend)
        try:
            for cell in pass_cells:
                if (boot, cell.name) not in mine.warmed:
                    warm, _ = mine.sender.send(cell, "warmup")
                    mine.warmups.setdefault(cell.name, []).append(warm)
                    mine.warmed.add((boot, cell.name))
                _repeat(mine, cell, k, meter)
        except RequestFailed as exc:  # never retried: this cell failed, the ones not finished are not run
            failed = (cell, side, exc)
        block["interleaved"]["order"].append(f"r{k} {side}" + (f" boot {boot}" if boot is not None else "")
                                             + f": {', '.join(c.name for c in pass_cells)}")
        _fill(block, ours, kept, repeats, failed)
        if on_pass is not None:
            on_pass(block)
        if failed is not None:
            break
    return block


def _fill(block: dict, ours: dict, kept: list, repeats: int, failed) -> None:
    """Each cell's block from what is measured so far: finished cells judged and compared, the rest not run yet."""
    for cell in kept:
        done = {s: len(side.samples.get(cell.name, [])) for s, side in ours.items()}
        if failed is not None and failed[0] == cell:
            block["cells"][cell.name] = {"status": FAILED, "reason": f"{failed[1]}: {failed[2]}",
                                         "prompt_tokens": cell.prompt_tokens, "gen_tokens": cell.gen_tokens}
        elif min(done.values()) < repeats:
            why = (f"an earlier request failed: {failed[0].name} on the {failed[1]}: {failed[2]}" if failed
                   else "not finished yet")
            block["cells"][cell.name] = {"status": NOT_RUN, "reason": f"{why} ({done[REFERENCE]} reference and "
                                                                     f"{done[CANDIDATE]} candidate repeat(s) of "
                                                                     f"{repeats})",
                                         "prompt_tokens": cell.prompt_tokens, "gen_tokens": cell.gen_tokens}
        elif block["cells"].get(cell.name, {}).get("status") != MEASURED:
            out = _side_block(ours[CANDIDATE], cell)
            out["reference"] = _side_block(ours[REFERENCE], cell)
            out["vs_reference"] = cell_versus(out, out["reference"])
            block["cells"][cell.name] = out
