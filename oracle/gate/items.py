"""Gate items: one pytest item per gate check, built from the plan alone.

No server is queried to build them, so every pytest-xdist worker collects the same items, and
the xdist controller (which collects nothing) knows each item's kind from the same specs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from oracle.checks import CHECKS, CheckDescriptor
from oracle.compare.verdicts import MAX_MESSAGE_LINES, Check
from oracle.gate.placement import GATE_PREFIX

__all__ = ["GATE_KEY", "GateCollector", "GateFailure", "GateItem", "ItemSpec", "MAX_MESSAGE_LINES", "item_specs"]

GATE_KEY = pytest.StashKey()


@dataclass(frozen=True)
class ItemSpec:
    """A gate item: its name, the kind of check that answers it (the registry's key) and the check's argument."""

    name: str
    kind: str
    key: str | int | None = None
    deal: str | None = None  # under pytest -n (placement.py): its round-robin deal, None the common one
    together: bool = False  # every item of its kind on the worker its first one was dealt
    placed: str | None = None  # which worker runs it under pytest -n (`CheckItem.placed`, gate/placement.py)
    per_prompt: bool = False  # its key is a prompt whose primary run it judges (`CheckItem.per_prompt`)

    @property
    def judges_prompt(self) -> bool:
        return self.per_prompt or self.placed == "prompt"

    @property
    def nodeid(self) -> str:
        return GATE_PREFIX + self.name


def item_specs(plan, checks: tuple[CheckDescriptor, ...] = CHECKS) -> list[ItemSpec]:
    """Each check kind's items (oracle/checks/), in the order they run (`CheckDescriptor`'s `order`; items of one
    order in the order their kinds are listed in CHECKS)."""
    specs: list[tuple[int | tuple[int, ...], ItemSpec]] = []
    for check in checks:
        specs += [(check.order if item.order is None else item.order,
                   ItemSpec(item.name, item.kind, item.key, deal=item.deal, together=item.together,
                            placed=item.placed, per_prompt=item.per_prompt)) for item in check.items(plan)]
    # stable: one order keeps its listing; (10, i, k): the i-th prompt's own items
    return [spec for _, spec in sorted(specs, key=lambda pair: pair[0] if isinstance(pair[0], tuple) else (pair[0],))]


def plan_specs(gate) -> list[ItemSpec]:
    return item_specs(gate.plan)


class GateFailure(Exception):
    def __init__(self, check: Check) -> None:
        super().__init__(check.detail)
        self.check = check


class GateItem(pytest.Item):
    """One check: `spec.kind` names the producer in the session's check registry, `spec.key` its argument."""

    def __init__(self, *, spec: ItemSpec, **kw) -> None:
        super().__init__(**kw)
        self.spec = spec
        self.check: Check | None = None

    def runtest(self) -> None:
        gate = self.config.stash[GATE_KEY]
        check = gate.produce(self.spec.kind, self.spec.key)
        self.check = check
        ok = gate.judge(check)
        self.user_properties.append(("oracle_verdict", check.verdict))
        if not ok:
            raise GateFailure(check)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, GateFailure):
            c = excinfo.value.check
            lines = [f"{c.id}: {c.verdict}: {c.detail}"] + [f"  {line}" for line in c.lines]
            if len(lines) > MAX_MESSAGE_LINES:
                lines = lines[:MAX_MESSAGE_LINES] + [f"  ... {len(lines) - MAX_MESSAGE_LINES} more lines in identity.json"]
            return "\n".join(lines)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"oracle {self.name}"


class GateCollector(pytest.Collector):
    """The gate's items, from the plan's specs."""

    def __init__(self, *, specs: list[ItemSpec], **kw) -> None:
        super().__init__(**kw)
        self.specs = specs

    def collect(self):
        for spec in self.specs:
            yield GateItem.from_parent(self, name=spec.name, spec=spec)


def make_collector(session: pytest.Session, gate) -> GateCollector:
    return GateCollector.from_parent(session, name="oracle", nodeid="oracle", path=Path(gate.plan.suite.path),
                                     specs=plan_specs(gate))
