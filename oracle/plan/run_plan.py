"""The run plan, made after the warm-up from the collected items: each part's requests and tokens, its estimate at
the rates the warm-up measured (run/plan_estimate.py), the needles a time budget drops, and the ETA's map from
item to part (run/eta.py).

    hook = RunPlanHook(gate); lines = hook.make(session.items)   # hook.drops: what the needle canary drops
    hook.plan.dropped[0]["reason"]   # "needle 8176 would take ~160 s at 52 tok/s prefill ...; --needle-lengths ..."

Only needles of the default lengths are dropped for the budget (the longest first): they are the run on a slow
server, and a length given with --needle-lengths (or followed from the reference) is run whatever it takes.
"""

from __future__ import annotations


from oracle.backends import RequestFailed
from oracle.canary.kinds import CANARY_CHECK
from oracle.checks import CHECKS
from oracle.checks.descriptor import PlanContext
from oracle.run.eta import RunEta
from oracle.run.plan_estimate import Part, Rates, RunPlan, duration_words

__all__ = ["RunPlanHook", "make_run_plan"]

def _generated(gate, prompt) -> int:
    """What a prompt generates: its reference's length in a gate, else its max_tokens (an upper bound)."""
    ref = gate.plan.reference
    if ref is not None and prompt.id in ref.case_ids and not gate.plan.f16_gate:
        return len(ref.record(prompt.id).completion_ids)
    return prompt.prompt.max_tokens


class _Parts:
    """Parts by name in the order first met, with each item's part."""

    def __init__(self, rates: Rates) -> None:
        self.rates = rates
        self.shapes: dict[str, list[tuple[int, int]]] = {}
        self.notes: dict[str, str] = {}
        self.unknown: set[str] = set()
        self.items: dict[str, str] = {}  # nodeid -> part name
        self.extra: dict[str, float] = {}  # part name -> seconds beyond its requests' (server boots)

    def add(self, name: str, nodeid: str, shapes: list[tuple[int, int]] = (), note: str = "",
            estimated: bool = True, extra_s: float = 0.0) -> None:
        self.shapes.setdefault(name, []).extend(shapes)
        self.extra[name] = self.extra.get(name, 0.0) + extra_s
        if note:
            self.notes[name] = note
        if not estimated:
            self.unknown.add(name)
        self.items[nodeid] = name

    def parts(self) -> list[Part]:
        out = []
        for name, shapes in self.shapes.items():
            part = Part.of(name, shapes, self.rates, note=self.notes.get(name, ""), extra_s=self.extra.get(name, 0.0))
            if name in self.unknown:
                part.estimate_s = None
            out.append(part)
        return out


def _gate_item(parts: _Parts, item, context: PlanContext) -> None:
    """A gate item's part, as its check kind's descriptor gives it (`CheckDescriptor.plan_part`)."""
    spec = item.spec
    check = next(c for c in CHECKS if spec.kind in c.kinds)
    if check.plan_part is None:  # a kind's diagnostic requests (logits, decode vs prefill, A/B rounds, ...)
        parts.add(f"diagnostic: {spec.kind}", item.nodeid, note="requests of its own, not estimated",
                  estimated=False)
        return
    part = check.plan_part(spec.kind, spec.key, context)
    if part is not None:
        parts.add(part.name, item.nodeid, [] if part.once and part.name in parts.shapes else list(part.shapes),
                  note=part.note, extra_s=part.extra_s)


def _test_item(parts: _Parts, item, context: PlanContext) -> tuple[int, int] | None:
    """A collected test's part, as the check kind it belongs to gives it (`CheckDescriptor.plan_test`: the canary
    modules); (length, depth) of a part the budget may drop."""
    for check in CHECKS:
        part = check.plan_test(item, context) if check.plan_test is not None else None
        if part is not None:
            parts.add(part.name, item.nodeid, list(part.shapes), note=part.note)
            return part.budget
    return None


def _budget_drops(plan: RunPlan, needle_parts: dict[int, Part], kept: list[int], budget_s: float) -> dict[int, str]:
    """The needle lengths that do not fit the budget (the longest first), each with its reason."""
    needles = {id(p) for p in needle_parts.values()}
    fixed = sum(p.estimate_s for p in plan.parts if p.estimate_s is not None and id(p) not in needles)
    dropped: dict[int, str] = {}
    for length in sorted(needle_parts):
        part = needle_parts[length]
        if fixed + part.estimate_s <= budget_s and not dropped:
            fixed += part.estimate_s
            kept.append(length)
            continue
        run_it = ",".join(str(n) for n in sorted(kept + [length]))
        dropped[length] = (f"needle {length} would take ~{part.estimate_s:.0f} s ({part.requests} depth(s)) at "
                           f"{plan.rates.prefill_tps:.0f} tok/s prefill, beyond the budget of "
                           f"{duration_words(budget_s)} ({plan.budget_source}; the rest of the run is "
                           f"~{duration_words(fixed)}); --needle-lengths {run_it} to run it")
    return dropped


def make_run_plan(gate, items, warmup: dict | None) -> tuple[RunPlan, dict[str, int], dict[str, tuple]]:
    """(the plan, item nodeid -> part index, item nodeid -> (canary item id, family, why the budget drops it,
    the row's fields) for each item the budget drops)."""
    o = gate.options
    rates = Rates.from_warmup(warmup)
    parts = _Parts(rates)
    mine = [p for p in gate.prompts.rendered if gate.owned is None or p.id in gate.owned]
    context = PlanContext(tuple((len(p.ids), _generated(gate, p)) for p in mine), o, gate.plan.reference is not None,
                          gate.prompts, boot_s=getattr(gate.target, "boot_s", None))
    needles: dict[str, tuple[int, int]] = {}  # nodeid -> (length, depth)
    for item in items:
        spec = getattr(item, "spec", None)
        if spec is not None:
            _gate_item(parts, item, context)
            continue
        case = _test_item(parts, item, context)
        if case is not None:
            needles[item.nodeid] = case
    warm = Part("warm-up", (warmup or {}).get("requests", 0), (warmup or {}).get("prompt_tokens", 0)
                * (warmup or {}).get("requests", 0), sum((warmup or {}).get("completion_tokens") or []), None)
    warm.estimate_s = warm.actual_s = (warmup or {}).get("wall_s", 0.0)
    plan = RunPlan(rates, [warm] + parts.parts(), budget_s=o.budget, budget_source=o.budget_source)
    needle_parts = {int(p.name.split()[1]): p for p in plan.parts if p.name.startswith("needles ")}
    drops: dict[str, tuple] = {}
    if o.budget is not None and needle_parts and rates.known and o.check(CANARY_CHECK).needle_lengths is None:
        kept: list[int] = []
        by_length = _budget_drops(plan, needle_parts, kept, o.budget)
        for length, reason in by_length.items():
            part = needle_parts[length]
            plan.parts.remove(part)
            plan.dropped.append({"item": f"needles {length}", "length": length,
                                 "estimate_s": round(part.estimate_s, 1), "reason": reason})
        for nodeid, (length, depth) in needles.items():
            if length in by_length:
                drops[nodeid] = (f"needle[{length}-d{depth}]", "needle", by_length[length],
                                 {"length": length, "depth": depth, "budget": True})
    elif o.budget is not None and not rates.known:
        plan.notes.append(f"the budget was not applied: {rates.source}")
    elif o.budget is not None and needle_parts and o.check(CANARY_CHECK).needle_lengths is not None:
        plan.notes.append(f"needle lengths {', '.join(map(str, sorted(needle_parts)))} are run whatever the budget: "
                          f"{o.check(CANARY_CHECK).lengths_from}")
    if o.localize:
        plan.notes.append("--localize: no request; on a split, once the report is written: the reference's "
                          "configuration loaded and run twice over the split's path (its band), the candidate's "
                          "once (two model loads, three forward passes in this process); nothing on a gate that "
                          "passes")
    index = {p.name: i for i, p in enumerate(plan.parts)}
    part_of = {nodeid: index[name] for nodeid, name in parts.items.items() if name in index}
    return plan, part_of, drops


class RunPlanHook:
    """The session's run plan: made once after the warm-up (`make`), then asked by the needle canary for the
    budget's drops and by the plugin for the ETA as each item starts and finishes."""

    def __init__(self, gate) -> None:
        self.gate = gate
        self.plan: RunPlan | None = None
        self.eta: RunEta | None = None
        self.drops: dict[str, tuple] = {}  # item nodeid -> (item id, family, why the budget drops it, row)

    def make(self, items) -> list[str]:
        """Send the warm-up, make the plan, keep it in identity.json; the lines the terminal prints."""
        gate = self.gate
        if gate.primary is None or self.plan is not None:
            return []
        warmup = gate.primary.warm_up()
        if warmup is None:  # the warm-up failed: the run stops, the report says why
            return []
        try:
            self.plan, part_of, self.drops = make_run_plan(gate, items, warmup)
        except RequestFailed as exc:  # a canary prompt could not be tokenized: the run goes on without a plan
            gate.state.note(f"no run plan: {exc}")
            return [f"oracle plan: none ({exc})"]
        self.eta = RunEta(self.plan, part_of)
        gate.state.identity["plan"] = self.plan.as_json()
        if gate.options.plan_only:
            gate.state.note("--oracle-plan: the run plan was made after the warm-up and no other request was sent")
        gate.report.write()
        return self.plan.lines()

    def suffix(self) -> str:
        return self.eta.suffix() if self.eta is not None else ""

    def started(self, nodeid: str) -> None:
        if self.eta is not None:
            self.eta.started(nodeid)

    def finished(self, nodeid: str) -> str | None:
        """The part's line once its last item finished (its actual time goes into identity.json's plan)."""
        if self.eta is None:
            return None
        line = self.eta.finished(nodeid)
        if line is not None:
            self.gate.state.identity["plan"] = self.plan.as_json()
        return line
