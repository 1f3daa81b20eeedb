"""What oracle knows about a kind of gate check, in one frozen descriptor per kind.

    CHECK = CheckDescriptor(name="coverage", title="condition coverage", order=60, kinds=("coverage",),
                            items=items, build=build, state=CoverageState, add_options=add_options,
                            settings=settings_of, defaults=CoverageSettings(), sections=(report_coverage,))

Each kind declares its descriptor in its own package (`oracle/checks/<kind>/`) and `oracle.checks.CHECKS` lists
it once; the gate (plan, items, registry, merge, session) reads the descriptors and never a kind's name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, ClassVar, Mapping, Protocol

import pytest

from oracle.compare.verdicts import NOT_RUN, Check

__all__ = ["BudgetRule", "CheckDescriptor", "CheckItem", "CheckParts", "CheckState", "Droppable", "Finding", "Kept",
           "NoSection", "OptionContext", "PlanContext", "PlanPart", "Producers", "RunWatch", "SectionState", "no_requests", "not_run", "state_part"]


@dataclass
class Finding:
    """A producer's answer: the check, and what the report should hold beside it (`ReportState.apply`)."""

    check: Check
    report: dict = field(default_factory=dict)


def not_run(state, check_id: str, kind: str) -> Finding:
    """The answer of an item whose run stopped before it: not run, saying why."""
    return Finding(Check(check_id, kind, NOT_RUN, f"not run: {state.interruption}"))


@dataclass(frozen=True)
class CheckItem:
    """One gate item a check adds: its name, the kind of producer that answers it, the producer's argument,
    where it runs among the gate's items (`order`; None: its descriptor's, see `CheckDescriptor.order`) and which
    worker runs it under pytest -n (`placed`)."""

    name: str
    kind: str
    key: str | int | None = None
    order: int | tuple[int, ...] | None = None  # (10, i, k): beside the i-th prompt's own item
    # Under pytest -n (gate/placement.py): the round-robin deal it is dealt from (None: the one every other item
    # is dealt from), and whether every item of its kind goes to the worker its first one was dealt.
    deal: str | None = None
    together: bool = False
    # Under pytest -n: "prompt", dealt with the prompts (a worker runs its share at c1); "server", on the worker
    # of server `key` (it proves that server's own run); None, dealt round-robin (gate/placement.py).
    placed: str | None = None
    # Its key is a prompt whose primary run it judges (a prompt's tokens or logits): the prompts whose items
    # survive -k / deselection are the ones sent. Items placed with the prompts are.
    per_prompt: bool = False

    @property
    def judges_prompt(self) -> bool:
        return self.per_prompt or self.placed == "prompt"


@dataclass(frozen=True)
class PlanContext:
    """What an item's cost in the run plan is read against: each of this server's prompts as (prompt tokens,
    generated tokens), the run's options (`GateOptions`), whether the run gates against a reference."""

    suite: tuple[tuple[int, int], ...]
    options: Any
    reference: bool
    prompts: Any = None  # oracle.run.prompts: renders a test's own prompt to ids (`render_ids`)
    boot_s: float | None = None  # one boot of the run's server, as measured (None: oracle did not launch it)


@dataclass(frozen=True)
class PlanPart:
    """What one of a check's items costs in the run plan (oracle/plan/run_plan.py): the part it belongs to (the
    items of one part add up), the (prompt tokens, generated tokens) of each request it sends, a note for the
    plan's line; `once`: the part's requests are counted once however many items share it (the primary run,
    which every prompt's item judges); `budget`: the test is one --oracle-budget may leave out (its check's
    `BudgetRule` says how)."""

    name: str
    shapes: tuple[tuple[int, int], ...] = ()
    note: str = ""
    once: bool = False
    extra_s: float = 0.0  # seconds beyond its requests' (the server boots it waits on), added to its estimate
    budget: "Droppable | None" = None


@dataclass(frozen=True)
class Droppable:
    """A collected test --oracle-budget may leave out (`PlanPart.budget`): the parts of one check are kept smallest
    `size` first while the run fits the budget and the rest are left out whole (e.g. a needle length: its depths go
    with it). `item`, `family` and `row` are the left-out test's row in the report (its verdict `dropped`), `planned`
    the fields its part's entry in the plan's `dropped` adds."""

    size: int
    item: str  # "needle[8176-d50]"
    family: str  # "needle"
    row: Mapping[str, Any]  # {"length": 8176, "depth": 50}
    planned: Mapping[str, Any]  # {"length": 8176}


@dataclass(frozen=True)
class BudgetRule:
    """How --oracle-budget trims a check's tests (`CheckDescriptor.budget`). `fixed(options, sizes)`: the plan's note
    when the sizes run whatever the budget (the user gave them), None when the budget may leave some out;
    `reason(size, part, kept, rates, beyond)`: why a part is left out, from its size, its plan `Part` (estimate,
    requests), the sizes kept before it, the warm-up's `Rates` and `beyond` ("beyond the budget of 1 s (--oracle-budget
    1s; the rest of the run is ~30 s)")."""

    fixed: Callable[[Any, list[int]], str | None]
    reason: Callable[[int, Any, list[int], Any, str], str]


def no_requests(kind: str, key, context: PlanContext) -> None:
    """`CheckDescriptor.plan_part` of a kind judged from runs already counted: no request of its own."""
    return None


@dataclass(frozen=True)
class Kept:
    """What a recorded reference keeps of a check (`CheckDescriptor.for_reference`): its blocks of the manifest by
    key, what it adds to the manifest's `run`, and per block the completions of its rows (each record's id its
    row's key), kept under records/<block>/."""

    blocks: dict = field(default_factory=dict)
    run: dict = field(default_factory=dict)
    side_records: dict = field(default_factory=dict)


@dataclass(frozen=True)
class CheckParts:
    """What a check's producers are built from, as the session holds it once the server is up: the plan, the
    recorder (with its records and backend), the prompts, the report state, the target, what the server serves
    (its context, its prefill chunk)."""

    plan: Any
    recorder: Any
    prompts: Any
    state: Any
    target: Any = None
    served: Any = None  # oracle.run.served_context.ServedContext
    chunk: Any = None  # oracle.backends.base.PrefillChunk: the server's prefill chunk, as the session read it
    observers: Any = ()  # every kind's Producers.observe, as the session collects them (filled as kinds are built)


@dataclass(frozen=True)
class Producers:
    """A check's producers by item kind, and what it observes of each finished run (a ladder level, a boot):
    `observe(result, asked=, reached=, staggered=)` returns the report findings of that run; `watch(backend)` what
    it measures around the primary run (a `RunWatch`: the speed card's power window). What a recorded reference
    keeps of a check is read from its state (`CheckDescriptor.for_reference`), in one process or after a merge."""

    answers: Mapping[str, Callable[..., Finding]]
    observe: Callable[..., dict] | None = None
    watch: Callable[[Any], "RunWatch"] | None = None  # around the primary run: started before it, closed after


class RunWatch(Protocol):
    """What a check measures around the primary run: `start()` before its first request, `close()` after its last
    (whatever happened), then `findings(result, warmup)`, the report findings of the run it watched."""

    def start(self) -> None: ...

    def close(self) -> None: ...

    def findings(self, result, warmup: dict) -> dict: ...


@dataclass(frozen=True)
class OptionContext:
    """What a check's settings are read against, besides its own options: the run's servers and family."""

    urls: tuple[str, ...]
    workers: int
    family: Any  # oracle.backends.family.FamilyDescriptor
    backend: str = ""  # --backend as given, for a refusal's words
    reference: str | None = None  # --reference: the reference the run is gated against (None: none)


class CheckState(Protocol):
    """A check's part of the report: the identity.json keys it owns (`KEYS`), filled by its producers' findings,
    written and read back by itself, and merged from several servers' states under pytest -n. A state may also
    add counts to the report's summary (`summary(report) -> dict`) and to its confidence counts
    (`confidence(report) -> dict`), and place its keys among the report's (`PLACES`: a section's key, or
    "summary.<key>" / "confidence.<key>", -> a number of report/state.py's PLACES; a key without one follows)."""

    KEYS: tuple[str, ...]

    def apply(self, key: str, value) -> None: ...

    def to_json(self) -> dict: ...

    @classmethod
    def from_json(cls, data: Mapping) -> "CheckState": ...

    @classmethod
    def merge(cls, own: "CheckState", parts: list[tuple[str, "CheckState"]]) -> "CheckState": ...


def state_part(state, name: str) -> dict:
    """What a check state's optional method `name` gives, {} where it has none: `carried()`, the plain data a
    worker hands its controller beside its report (its state's `from_json` reads it back, for `merge`)."""
    method = getattr(state, name, None)
    return method() if method is not None else {}


@dataclass
class SectionState:
    """A `CheckState` that owns one identity.json key (`KEYS[0]`) holding a dict or None: the first finding is the
    report, a later one adds to it; the merged report keeps the controller's own (a subclass says why in `merge`)."""

    KEYS: ClassVar[tuple[str, ...]] = ()

    report: dict | None = None

    def apply(self, key: str, value: dict | None) -> None:
        if isinstance(self.report, dict) and isinstance(value, dict):
            self.report.update(value)
        else:
            self.report = value

    def to_json(self) -> dict:
        return {self.KEYS[0]: self.report}

    @classmethod
    def from_json(cls, data: Mapping) -> "SectionState":
        return cls(data.get(cls.KEYS[0]))

    @classmethod
    def merge(cls, own: "SectionState", parts: list[tuple[str, "SectionState"]]) -> "SectionState":
        return cls(own.report)


@dataclass
class NoSection:
    """The state of a check whose findings go into another check's section (the A/B and the cells': the speed
    check's card): it owns no identity.json key."""

    KEYS: ClassVar[tuple[str, ...]] = ()

    def apply(self, key: str, value) -> None:
        raise KeyError(f"{key}: this check's findings go into another check's section")

    def to_json(self) -> dict:
        return {}

    @classmethod
    def from_json(cls, data: Mapping) -> "NoSection":
        return cls()

    @classmethod
    def merge(cls, own: "NoSection", parts: list) -> "NoSection":
        return cls()


@dataclass(frozen=True)
class CheckDescriptor:
    """One kind of gate check, all of itself.

    name: the kind (its package's name); title: a few words for its `--help` group and docs/options.md section.
    order: where its items run among the gate's (lower first; items of one order keep the order of `CHECKS`):
      10 per prompt (the primary run), 20 the run's evidence, 30-39 speed, 40-49 diagnostic requests (teacher
      forced, scored), 50-59 conditions (ladder levels, later boots), 60 after every run.
    items(plan) -> the items it adds for this plan (none: the check is off).
    build(parts) -> its producers, once the server is up.
    state: its `CheckState` class (a fresh one is `state()`).
    add_options(group): its options, on its own `--help` group (titled `oracle: <title>`).
    settings(option, context) -> its frozen settings, read from pytest's option namespace; raises
      pytest.UsageError naming the fix. `defaults` are the settings when no option was read (tests, library use).
    sections: its report sections (modules with PLACE, markdown and html: oracle/report/sections.py), laid out
      with the report's own in oracle.checks.SECTIONS; a section two kinds share is named by both.
    server_identity: the identity keys its producers write that belong to one server: under pytest -n each
      server's row of the merged identity keeps them, the run's identity does not.
    resolve(settings, reference) -> its settings settled against the loaded reference, before any server starts
      (`--reference-launch recorded`); raises pytest.UsageError naming the fix.
    for_reference(state, plan, records) -> what a reference recorded by this run keeps of it (a `Kept`: its blocks
      of the manifest by key), read from the finished report (a single server's, or the xdist controller's merged
      one), the run's plan and its primary records.
    blocks: the shapes of the manifest blocks it keeps (key -> a store.shapes.Shape type), checked when a gate
      loads the reference.
    plan_part(kind, key, context) -> an item's `PlanPart` in the run plan made after the warm-up (None: it sends
      no request of its own, `no_requests`); a kind without one sends requests the plan names but cannot estimate.
    plan_test(item, context) -> the `PlanPart` of a collected pytest test of this kind that is no gate item (the
      canary modules), None for a test not its own.
    budget: how --oracle-budget may leave out its tests whose `PlanPart.budget` is set (a `BudgetRule`).
    settings_notes(settings) -> what its settings say of how `resolve` settled them against the reference (the
      report's notes).
    terminal(state) -> the lines it prints at the end of the run, from its finished state (the controller's
      merged one under -n), e.g. the conditions' width map.
    warnings(report) -> the lines it prints in yellow at the end of the run, from the finished report (the
      `ReportState`), e.g. the canaries a reference holds no completion of.
    """

    name: str
    title: str
    order: int
    kinds: tuple[str, ...]  # the item kinds its producers answer (the registry's keys)
    items: Callable[[Any], list[CheckItem]]
    build: Callable[[CheckParts], Producers]
    state: type
    add_options: Callable[[Any], None] | None = None
    settings: Callable[[Any, OptionContext], Any] | None = None
    defaults: Any = None
    sections: tuple[ModuleType, ...] = ()
    server_identity: tuple[str, ...] = ()  # identity keys its producers write of one server (boots' servers)
    resolve: Callable[[Any, Any], Any] | None = None
    for_reference: Callable[[Any, Any, list], Kept] | None = None
    blocks: Mapping[str, Any] = field(default_factory=dict)
    plan_part: Callable[[str, Any, PlanContext], "PlanPart | None"] | None = None
    plan_test: Callable[[Any, PlanContext], "PlanPart | None"] | None = None
    budget: BudgetRule | None = None
    settings_notes: Callable[[Any], tuple[str, ...]] | None = None
    terminal: Callable[[Any], list[str]] | None = None
    warnings: Callable[[Any], list[str]] | None = None

    @property
    def group(self) -> str:
        """Its `--help` group's name."""
        return f"oracle-{self.name}"

    def option_group(self, parser: pytest.Parser):
        return parser.getgroup(self.group, f"oracle: {self.title}")
