"""Gate items: one pytest item per gate check, built from the suite and options alone.

No server is queried to build them, so every pytest-xdist worker collects the same items.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle.gate.placement import server_label
from oracle.compare.verdicts import Check

__all__ = ["GateCollector", "GateFailure", "GateItem", "MAX_MESSAGE_LINES"]

MAX_MESSAGE_LINES = 24


class GateFailure(Exception):
    def __init__(self, check: Check) -> None:
        super().__init__(check.detail)
        self.check = check


class GateItem(pytest.Item):
    """One check: `kind` names the session method that produces its Check, `key` its argument."""

    def __init__(self, *, kind: str, key: str | int | None = None, **kw) -> None:
        super().__init__(**kw)
        self.kind = kind
        self.key = key
        self.check: Check | None = None

    def runtest(self) -> None:
        gate = self.config.stash[GATE_KEY]
        gate.ensure_run()
        producer = getattr(gate, f"{self.kind}_check")
        check = producer(self.key) if self.key is not None else producer()
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
    """The gate's items: record[...] / tokens[...] / run[...] per prompt, the evidence items, the ladder
    levels, the later boots."""

    def __init__(self, *, prompt_ids: list[str], mode: str, ladder: tuple[int, ...], boots: int, servers: int = 1,
                 tokens: bool = True, logits: bool = False, floor: bool = False, **kw) -> None:
        super().__init__(**kw)
        self.prompt_ids = prompt_ids
        self.mode = mode
        self.ladder = ladder
        self.boots = boots
        self.servers = servers
        self.tokens = tokens  # an f16 reference is gated on logits only
        self.logits = logits
        self.floor = floor

    def collect(self):
        per_prompt = {"gate": "tokens", "record": "record", "run": "record"}[self.mode]
        label = {"gate": "tokens", "record": "record", "run": "run"}[self.mode]
        for pid in self.prompt_ids:
            if self.tokens or self.mode != "gate":
                yield GateItem.from_parent(self, name=f"{label}[{pid}]", kind=per_prompt, key=pid)
            if self.logits:
                yield GateItem.from_parent(self, name=f"logits[{pid}]", kind="logits", key=pid)
        if self.servers == 1:
            yield GateItem.from_parent(self, name="cache-zero", kind="cache")
            yield GateItem.from_parent(self, name="speculation", kind="speculation")
        else:  # each server proves its own run (see placement.py)
            for s in range(self.servers):
                yield GateItem.from_parent(self, name=f"cache-zero[{server_label(s)}]", kind="cache", key=s)
            for s in range(self.servers):
                yield GateItem.from_parent(self, name=f"speculation[{server_label(s)}]", kind="speculation", key=s)
        # Teacher-forced requests run after the gated run and its cache-zero evidence, before any ladder level.
        if self.logits:
            yield GateItem.from_parent(self, name="logits", kind="logits_suite")
        if self.floor:
            yield GateItem.from_parent(self, name="logits-floor", kind="logits_floor")
        # Ladder levels run in boot 1, before any restart; then each later boot.
        for level in self.ladder:
            yield GateItem.from_parent(self, name=f"ladder[c{level}]", kind="ladder", key=level)
        for boot in range(2, self.boots + 1):
            yield GateItem.from_parent(self, name=f"boot[{boot}]", kind="boot", key=boot)


def make_collector(session: pytest.Session, gate) -> GateCollector:
    return GateCollector.from_parent(session, name="oracle", nodeid="oracle", path=Path(gate.suite.path),
                                     prompt_ids=gate.suite.ids(), mode=gate.mode,
                                     ladder=gate.options.ladder, boots=gate.options.boots,
                                     servers=gate.options.workers, tokens=not gate.f16_gate,
                                     logits=gate.logits_gate, floor=gate.floor_wanted)


GATE_KEY = pytest.StashKey()
