"""Gate items: one pytest item per gate check, built from the suite and options alone.

No server is queried to build them, so every pytest-xdist worker collects the same items.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .verdicts import Check

__all__ = ["GateCollector", "GateFailure", "GateItem", "MAX_MESSAGE_LINES"]

MAX_MESSAGE_LINES = 24


class GateFailure(Exception):
    def __init__(self, check: Check) -> None:
        super().__init__(check.detail)
        self.check = check


class GateItem(pytest.Item):
    """One check: `kind` names the session method that produces its Check, `key` its argument."""

    def __init__(self, *, kind: str, key: str | None = None, **kw) -> None:
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
    """The gate's items for a mode: record[...] / tokens[...] / run[...] per prompt, then evidence items."""

    def __init__(self, *, prompt_ids: list[str], mode: str, speculative: bool, **kw) -> None:
        super().__init__(**kw)
        self.prompt_ids = prompt_ids
        self.mode = mode
        self.speculative = speculative

    def collect(self):
        per_prompt = {"gate": "tokens", "record": "record", "run": "record"}[self.mode]
        label = {"gate": "tokens", "record": "record", "run": "run"}[self.mode]
        for pid in self.prompt_ids:
            yield GateItem.from_parent(self, name=f"{label}[{pid}]", kind=per_prompt, key=pid)
        yield GateItem.from_parent(self, name="cache-zero", kind="cache")
        if self.speculative:
            yield GateItem.from_parent(self, name="speculation", kind="speculation")


def make_collector(session: pytest.Session, gate) -> GateCollector:
    return GateCollector.from_parent(session, name="oracle", nodeid="oracle", path=Path(gate.suite.path),
                                     prompt_ids=gate.suite.ids(), mode=gate.mode,
                                     speculative=gate.options.speculative)


GATE_KEY = pytest.StashKey()
