"""The run plan, made after the warm-up from the collected items: each part's requests and tokens, its estimate at
the rates the warm-up measured (run/plan_estimate.py), the tests a time budget leaves out, and the ETA's map from
item to part (run/eta.py).

    hook = RunPlanHook(gate); lines = hook.make(session.items)   # hook.drops: the tests the budget leaves out
    hook.plan.dropped[0]["reason"]   # "needle 8176 would take ~160 s at 52 tok/s prefill ...; --needle-lengths ..."

What --oracle-budget may leave out is each check's to say: a collected test whose `PlanPart.budget` is set, under its
check's `BudgetRule` (the canaries': needles of the default lengths, the longest first). The plan keeps the smallest
sizes while the run fits and names no check.
"""

from __future__ import annotations


from oracle.backends import RequestFailed
from oracle.checks import CHECKS
from oracle.checks.descriptor import CheckDescriptor, Droppable, PlanContext
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


def _test_item(parts: _Parts, item, context: PlanContext):
    """A collected test's part, as the check kind it belongs to gives it (`CheckDescriptor.plan_test`: the canary
    modules); (its check, its `Droppable`, its part's name) when the budget may leave it out."""
    for check in CHECKS:
        part = check.plan_test(item, context) if check.plan_test is not None else None
        if part is not None:
            parts.add(part.name, item.nodeid, list(part.shapes), note=part.note)
            return (check, part.budget, part.name) if part.budget is not None and check.budget is not None else None
    return None


def _budget_cuts(plan: RunPlan, checks: dict, options, drops: dict[str, tuple]) -> None:
    """Leave out what does not fit the budget: per check, its parts by size, the smallest kept first while the run
    fits, and from the first that does not, it and every larger one, each with its check's reason, in the plan's
    `dropped` and in `drops` (item nodeid -> the left-out row)."""
    cut = {id(p) for _, by_size in checks.values() for p, _ in by_size.values()}
    fixed = sum(p.estimate_s for p in plan.parts if p.estimate_s is not None and id(p) not in cut)
    for check, by_size in checks.values():
        note = check.budget.fixed(options, sorted(by_size))
        if note is not None:
            plan.notes.append(note)
            continue
        kept: list[int] = []
        left_out = False
        for size in sorted(by_size):
            part, items = by_size[size]
            cost = part.estimate_s or 0.0
            if not left_out and fixed + cost <= options.budget:
                fixed += cost
                kept.append(size)
                continue
            left_out = True
            beyond = (f"beyond the budget of {duration_words(options.budget)} ({plan.budget_source}; the rest of the "
                      f"run is ~{duration_words(fixed)})")
            reason = check.budget.reason(size, part, kept, plan.rates, beyond)
            plan.parts.remove(part)
            plan.dropped.append({"item": part.name, **next(iter(items.values())).planned,
                                 "estimate_s": round(cost, 1), "reason": reason})
            for nodeid, d in items.items():
                drops[nodeid] = (d.item, d.family, reason, {**d.row, "budget": True})


def _by_check(plan: RunPlan, cuttable: dict[str, tuple[CheckDescriptor, Droppable, str]]) -> dict:
    """check name -> (the check, size -> (its plan part, nodeid -> Droppable)) of the tests the budget may leave
    out."""
    named = {p.name: p for p in plan.parts}
    out: dict = {}
    for nodeid, (check, d, name) in cuttable.items():
        out.setdefault(check.name, (check, {}))[1].setdefault(d.size, (named[name], {}))[1][nodeid] = d
    return out


def make_run_plan(gate, items, warmup: dict | None) -> tuple[RunPlan, dict[str, int], dict[str, tuple]]:
    """(the plan, item nodeid -> part index, item nodeid -> (the left-out row's item id, family, why the budget
    leaves it out, the row's fields) for each test the budget leaves out)."""
    o = gate.options
    rates = Rates.from_warmup(warmup)
    parts = _Parts(rates)
    mine = [p for p in gate.prompts.rendered if gate.owned is None or p.id in gate.owned]
    context = PlanContext(tuple((len(p.ids), _generated(gate, p)) for p in mine), o, gate.plan.reference is not None,
                          gate.prompts, boot_s=getattr(gate.target, "boot_s", None))
    cuttable: dict[str, tuple] = {}  # nodeid -> (check, Droppable, part name)
    for item in items:
        spec = getattr(item, "spec", None)
        if spec is not None:
            _gate_item(parts, item, context)
            continue
        case = _test_item(parts, item, context)
        if case is not None:
            cuttable[item.nodeid] = case
    warm = Part("warm-up", (warmup or {}).get("requests", 0), (warmup or {}).get("prompt_tokens", 0)
                * (warmup or {}).get("requests", 0), sum((warmup or {}).get("completion_tokens") or []), None)
    warm.estimate_s = warm.actual_s = (warmup or {}).get("wall_s", 0.0)
    plan = RunPlan(rates, [warm] + parts.parts(), budget_s=o.budget, budget_source=o.budget_source)
    drops: dict[str, tuple] = {}
    if o.budget is not None and cuttable and rates.known:
        _budget_cuts(plan, _by_check(plan, cuttable), o, drops)
    elif o.budget is not None and not rates.known:
        plan.notes.append(f"the budget was not applied: {rates.source}")
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
