"""What oracle knows about a kind of gate check, in one frozen descriptor per kind.

    CHECK = CheckDescriptor(name="coverage", title="condition coverage", order=60, kinds=("coverage",),
                            items=items, build=build, state=CoverageState, add_options=add_options,
                            settings=settings_of, defaults=CoverageSettings(), section=report_coverage)

Each kind declares its descriptor in its own package (`oracle/checks/<kind>/`) and `oracle.checks.CHECKS` lists
it once; the gate (plan, items, registry, merge, session) reads the descriptors and never a kind's name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, ClassVar, Mapping, Protocol

import pytest

from oracle.compare.verdicts import NOT_RUN, Check

__all__ = ["CheckDescriptor", "CheckItem", "CheckParts", "CheckState", "Finding", "OptionContext", "Producers",
           "SectionState",
           "not_run"]


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
    """One gate item a check adds: its name, the kind of producer that answers it, the producer's argument, and
    where it runs among the gate's items (`order`; None: its descriptor's, see `CheckDescriptor.order`)."""

    name: str
    kind: str
    key: str | int | None = None
    order: int | tuple[int, ...] | None = None  # (10, i, k): beside the i-th prompt's own item


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


@dataclass(frozen=True)
class Producers:
    """A check's producers by item kind, and what it observes of each finished run (a ladder level, a boot):
    `observe(result, asked=, reached=, staggered=)` returns the report findings of that run; `for_reference()` the
    keywords it adds to the reference a record run writes (the precision floor)."""

    answers: Mapping[str, Callable[..., Finding]]
    observe: Callable[..., dict] | None = None
    for_reference: Callable[[], dict] | None = None  # what a recorded reference keeps of it (write_run_reference)


@dataclass(frozen=True)
class OptionContext:
    """What a check's settings are read against, besides its own options: the run's servers and family."""

    urls: tuple[str, ...]
    workers: int
    family: Any  # oracle.backends.family.FamilyDescriptor


class CheckState(Protocol):
    """A check's part of the report: the identity.json keys it owns (`KEYS`), filled by its producers' findings,
    written and read back by itself, and merged from several servers' states under pytest -n."""

    KEYS: tuple[str, ...]

    def apply(self, key: str, value) -> None: ...

    def to_json(self) -> dict: ...

    @classmethod
    def from_json(cls, data: Mapping) -> "CheckState": ...

    @classmethod
    def merge(cls, own: "CheckState", parts: list[tuple[str, "CheckState"]]) -> "CheckState": ...


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
    section: its report section (a module of oracle.report.sections.SECTIONS).
    recorded(state) -> what a reference recorded by the run keeps of its state (write_reference's keywords).
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
    section: ModuleType | None = None
    recorded: Callable[[Any], dict] | None = None

    @property
    def group(self) -> str:
        """Its `--help` group's name."""
        return f"oracle-{self.name}"

    def option_group(self, parser: pytest.Parser):
        return parser.getgroup(self.group, f"oracle: {self.title}")
