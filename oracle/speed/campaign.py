"""The speed campaign of cells: per cell one same-shape warm-up (discarded, shown), then N cold repeats, every
sample kept.

    block = measure_cells(backend, cells, 5, tokenize=prompts.tokenize, haystack=units, context=served_context)
    block["cells"]["p512/g128"]["summary"]     # median / p10 / mean / min / max over the repeats
    block["cells"]["p8192/g1"]["status"]       # "dropped": beyond the server's context, not sent

A g1 cell measures cold input: prompt tokens / TTFT. A longer cell measures decode: the conventional rate
99 / (t100 - t1) (speed/figures.py), or, for a cell of fewer than 101 generated tokens, the after-TTFT rate
(n - 1) / (t_n - t_1), named in the cell. Each cell's repeats are proven cold by the server's counters read right
around them (compare/evidence.cache_zero_check), and their timestamps judged credible (speed/credible.py). Where the
backend can force the generation length (`Capabilities.fixed_length`: llama.cpp `ignore_eos`, vLLM `ignore_eos` +
`min_tokens`) every request asks for it; where it cannot, the block says so and counts the short samples.

`meter`, when given, opens an energy window on a backend (`meter(backend)`: speed/power.py's PowerWindow, with
`start()`, `close()`, `stop(generated_tokens) -> (power, isolation)`): one window around each cell's timed repeats,
kept as the cell's `energy` (speed/cell_energy.py).
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid

from oracle.backends import CompletionRequest, RequestFailed
from oracle.compare.evidence import cache_zero_check
from oracle.compare.verdicts import PASS
from oracle.speed.cell_energy import cell_energy
from oracle.speed.cells import COLD_INPUT, Cell, cell_prompt, entropy_prefix, haystack_ids
from oracle.speed.credible import MIN_SPREAD_TOKENS, counter_evidence, credibility, timestamp_figures
from oracle.speed.figures import MIN_TOKENS, after_ttft_rate, conventional_rate, prompt_figures, spread
from oracle.store.records import Condition, Record

__all__ = ["CELL_CONDITION", "FAILED", "MEASURED", "NOT_RUN", "DROPPED", "REFERENCE_LABEL", "Sender", "add_counters",
           "beyond", "block_head", "cell_head", "judge_cell", "measure_cells", "metric_name", "reference_ratios",
           "warmup_json"]

MEASURED, DROPPED, FAILED, NOT_RUN = "measured", "dropped", "failed", "not run"
CELL_CONDITION = Condition(boot=0)  # never a condition of the suite: cell records are never saved or compared
REFERENCE_LABEL = "reference measured in another run, no interval"
_COLD = "prompt tokens / TTFT (tok/s)"
_CONVENTIONAL = "conventional decode rate 99/(t100-t1) (tok/s)"
_AFTER_TTFT = f"after-TTFT rate (n-1)/(tn-t1) (tok/s; under {MIN_TOKENS} generated tokens, no conventional rate)"


def metric_name(cell: Cell) -> str:
    if cell.measures == COLD_INPUT:
        return _COLD
    return _CONVENTIONAL if cell.gen_tokens >= MIN_TOKENS else _AFTER_TTFT


def _value(cell: Cell, completion) -> float | None:
    times = completion.token_times_s
    if cell.measures == COLD_INPUT:
        return cell.prompt_tokens / times[0] if times and times[0] > 0 else None
    return conventional_rate(times) if cell.gen_tokens >= MIN_TOKENS else after_ttft_rate(times)


def _complete(backend, request: CompletionRequest):
    async def go():
        async with backend.async_client() as client:
            return await backend.complete(client, request)
    return asyncio.run(go())


def _server_prompt_tokens(completion) -> int | None:
    """How many prompt tokens the server says it took: its echo of the ids, else its own timings' prompt_n."""
    if completion.prompt_ids is not None:
        return len(completion.prompt_ids)
    n = (completion.server_timings or {}).get("prompt_n")
    return int(n) if n is not None else None


def _sample(cell: Cell, repeat: int, prefix: str, ids: list[int], completion, started: float) -> dict:
    value = _value(cell, completion)
    said = _server_prompt_tokens(completion)
    return {"repeat": repeat, "prefix": prefix, "started_at": round(started, 3), "prompt_tokens": len(ids),
            "server_prompt_tokens": said, "prompt_exact": None if said is None else said == cell.prompt_tokens,
            "generated": len(completion.completion_ids), "finish_reason": completion.finish_reason,
            "short": len(completion.completion_ids) < cell.gen_tokens,
            "cached_prompt_tokens": completion.cached_prompt_tokens,
            "value": None if value is None else round(value, 3),
            **prompt_figures(completion.token_times_s),
            **timestamp_figures(completion.token_times_s, completion.server_timings)}


class Sender:
    def __init__(self, backend, tokenize, hay: list[int], seed: int) -> None:
        self.backend, self.tokenize, self.hay, self.seed = backend, tokenize, hay, seed
        self.nonce = uuid.uuid4().hex[:16]  # unique to this run: a server's cache from an earlier run cannot hit
        self.fixed = backend.capabilities.fixed_length is not None

    def send(self, cell: Cell, repeat: int | str) -> tuple[dict, Record]:
        prefix = entropy_prefix(uuid.uuid4().hex[:12], self.nonce, cell,
                                f"r{repeat}" if isinstance(repeat, int) else repeat)
        ids = cell_prompt(cell, prefix, tokenize=self.tokenize, haystack=self.hay)
        request = CompletionRequest(prompt_ids=tuple(ids), max_tokens=cell.gen_tokens, logprobs=0, seed=self.seed,
                                    ignore_eos=self.fixed)
        started = time.time()
        completion = _complete(self.backend, request)
        record = Record.from_completion(cell.name, ids, CELL_CONDITION, completion, started_at=started,
                                        finished_at=time.time(), repeat=repeat if isinstance(repeat, int) else 0)
        return _sample(cell, repeat if isinstance(repeat, int) else 0, prefix, ids, completion, started), record


def beyond(cell: Cell, context) -> str | None:
    tokens = getattr(context, "tokens", None)
    if tokens is None or cell.prompt_tokens + cell.gen_tokens <= tokens:
        return None
    return f"beyond the server's context of {tokens} tokens ({cell.prompt_tokens} + {cell.gen_tokens} needed)"


def _summary(samples: list[dict]) -> dict | None:
    values = [s["value"] for s in samples if s["value"] is not None and not s["short"]]
    out = spread(values)
    if out is None:
        return None
    out["samples"] = out.pop("prompts")
    return out


def cell_head(cell: Cell) -> dict:
    return {"status": MEASURED, "measures": cell.measures, "metric": metric_name(cell),
            "prompt_tokens": cell.prompt_tokens, "gen_tokens": cell.gen_tokens}


def warmup_json(warm: dict) -> dict:
    return {k: warm[k] for k in ("prefix", "generated", "ttft_s", "value", "server_prompt_tokens")}


def add_counters(a, b):
    """Two counter deltas (Counters) summed field by field (None where either is None): the repeats of one side
    read one at a time (interleaved), as if read around all of them."""
    if a is None or b is None:
        return a if b is None else b
    total = {}
    for name in a.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        if x is None or y is None:
            total[name] = None
        elif isinstance(x, tuple):
            width = max(len(x), len(y))
            total[name] = tuple(p + q for p, q in zip(x + (0.0,) * (width - len(x)), y + (0.0,) * (width - len(y))))
        else:
            total[name] = x + y
    return type(a)(**total)


def judge_cell(out: dict, backend, cell: Cell, samples: list[dict], records: list, delta, prefixes: list[str]) -> dict:
    """The cell's proofs and figures from its samples: cache-zero from `delta` (the server's counters around the
    repeats), credibility, short samples, the server's prompt counts, unique prefixes (`prefixes`: every request of
    the cell, warm-ups included), the summary."""
    if backend.capabilities.in_process:
        out["cache"] = {"verdict": PASS, "detail": "in process: a fresh KV cache per request"}
        counters, missing = None, "in process: no server, no counters"
    else:
        check = cache_zero_check(records, delta, cache=backend.capabilities.cache,
                                 check_id=f"speed-cells[{cell.name}]")
        out["cache"] = {"verdict": check.verdict, "detail": check.detail, "lines": check.lines}
        generated = delta.tokens_generated if delta is not None else None
        counters = counter_evidence(sum(s["generated"] for s in samples), generated,
                                    counter="generated tokens in /metrics") if generated is not None else None
        missing = f"the server exposes no generated-token counter ({backend.capabilities.cache.counters_hint})"
    out["credible"] = credibility({f"r{s['repeat']}": s for s in samples}, counters=counters,
                                  counters_missing=missing)
    if cell.gen_tokens < MIN_SPREAD_TOKENS:  # nothing to spread: say why, not that the server gave no timings
        out["credible"]["not_checked"] = [
            f"stream and server timings: a {cell.gen_tokens}-token completion is under {MIN_SPREAD_TOKENS} tokens"
        ] + [x for x in out["credible"]["not_checked"] if x.startswith("counters")]
    out["samples"] = samples
    out["short"] = sum(s["short"] for s in samples)
    out["prompt_mismatch"] = [s["repeat"] for s in samples if s["prompt_exact"] is False]
    out["unique_prefixes"] = len(set(prefixes)) == len(prefixes)
    out["summary"] = _summary(samples)
    return out


def _cell(sender: Sender, cell: Cell, repeats: int, meter) -> dict:
    backend = sender.backend
    out = cell_head(cell)
    warm, _ = sender.send(cell, "warmup")
    out["warmup"] = warmup_json(warm)
    before = backend.counters()
    window = meter(backend) if meter is not None else None
    if window is not None:
        window.start()
    samples, records = [], []
    try:
        for k in range(1, repeats + 1):
            sample, record = sender.send(cell, k)
            samples.append(sample)
            records.append(record)
    finally:
        if window is not None:
            window.close()
    if window is not None:
        out["energy"] = cell_energy(*window.stop(generated_tokens=sum(s["generated"] for s in samples)))
    after = backend.counters()
    delta = after.delta(before) if before is not None and after is not None else None
    return judge_cell(out, backend, cell, samples, records, delta, [warm["prefix"]] + [s["prefix"] for s in samples])


def block_head(backend, repeats: int, context) -> dict:
    fixed = backend.capabilities.fixed_length
    return {"repeats": repeats, "fixed_length": fixed,
            "fixed_length_missing": None if fixed else (
                f"the {backend.family} backend cannot force the generation length (no ignore_eos): a completion may "
                "stop early at its end of sequence; such samples are counted as short and left out of the figures"),
            "context": getattr(context, "tokens", None), "cells": {}}


def measure_cells(backend, cells, repeats: int, *, tokenize, haystack, context, seed: int = 1234,
                  meter=None, on_cell=None) -> dict:
    """identity.json's `speed.cells`: every cell measured (or dropped, or failed: a failed request stops the cells
    that follow, never retried), in order. `haystack`: the haystack's text units; `context`: the server's context
    as read at start (`.tokens`, None when unknown); `on_cell(block)`, when given, after each cell (the partial
    report kept current: a run stopped midway keeps the cells it finished)."""
    block = block_head(backend, repeats, context)
    sender = Sender(backend, tokenize, haystack_ids(tokenize, haystack), seed)
    block["nonce"] = sender.nonce
    failed = None
    for cell in cells:
        if failed is not None:
            block["cells"][cell.name] = {"status": NOT_RUN, "reason": f"an earlier cell failed: {failed}",
                                         "prompt_tokens": cell.prompt_tokens, "gen_tokens": cell.gen_tokens}
        elif (why := beyond(cell, context)) is not None:
            block["cells"][cell.name] = {"status": DROPPED, "reason": why, "measures": cell.measures,
                                         "prompt_tokens": cell.prompt_tokens, "gen_tokens": cell.gen_tokens}
        else:
            try:
                block["cells"][cell.name] = _cell(sender, cell, repeats, meter)
            except RequestFailed as exc:  # never retried: the cell says why, the ones after it are not run
                failed = f"{cell.name}: {exc}"
                block["cells"][cell.name] = {"status": FAILED, "reason": str(exc),
                                             "prompt_tokens": cell.prompt_tokens, "gen_tokens": cell.gen_tokens}
        if on_cell is not None:
            on_cell(block)
    return block


def reference_ratios(mine: dict, reference: dict | None) -> dict | None:
    """Per cell the candidate's median / the reference's median, for the cells both measured; labelled: the
    reference ran in another run (another boot, thermal state), so no interval is given."""
    if not reference or not reference.get("cells"):
        return None
    ratios = {}
    for name, cell in mine.get("cells", {}).items():
        theirs = reference["cells"].get(name) or {}
        a, b = (cell.get("summary") or {}).get("median"), (theirs.get("summary") or {}).get("median")
        if a and b:
            ratios[name] = {"candidate": a, "reference": b, "ratio": round(a / b, 3)}
    missing = sorted(set(mine.get("cells", {})) - set(ratios))
    return {"label": REFERENCE_LABEL, "ratios": ratios, "median_of_ratios":
            round(statistics.median(r["ratio"] for r in ratios.values()), 3) if ratios else None,
            "not_compared": missing}
