"""Everything the identity report says, as one object that serialises itself and reads itself back.

    state = ReportState(mode="gate", backend="llamacpp")
    state.apply({"ladder": {"c8": summary}, "determinism": "within-boot"})   # a check producer's findings
    data = state.as_json()                                                    # identity.json
    same = ReportState.from_json(data)                                        # a worker's state, typed again

Each check kind keeps its part of the report in a state of its own (`states`: kind -> its `CheckState`,
oracle/checks/<kind>/), which writes, reads back and merges its own identity.json keys; the xdist controller
merges the workers' typed states field by field (`oracle.gate.merge`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from oracle.compare.confidence import count_json
from oracle.compare.verdicts import CONTAMINATED, INCONCLUSIVE, Check
from oracle.store.records import PRIMARY, RecordKey
from oracle.store.stamps import utc_now as _utc

__all__ = ["PLACES", "REPORT_SCHEMA_VERSION", "ReportState"]

REPORT_SCHEMA_VERSION = 2  # 2: the speed card (`speed`), Wilson intervals on counts; see docs/report-schema.md


# Where the report's own keys go in identity.json's `summary` and its `confidence` counts; a check state places its
# own keys among them by its `PLACES` ("summary.<key>", "confidence.<key>", or a section's key), each check's keys
# without a place following, in the order of its kind in oracle.checks.CHECKS.
PLACES = {"summary.inconclusive": 70, "summary.contaminated": 90, "summary.checks_passed": 100,
          "summary.records": 110, "summary.records_all_conditions": 120, "summary.confidence": 130,
          "confidence.exact": 10, "confidence.servers_c1": 40}


@dataclass
class ReportState:
    """Everything the report says; the session fills it as the run goes (through `apply` and the recorder)."""

    mode: str  # record, gate or run
    backend: str
    started_utc: str = field(default_factory=_utc)
    identity: dict = field(default_factory=dict)
    suite: dict = field(default_factory=dict)
    reference: dict | None = None
    prompt_ids: list[str] = field(default_factory=list)
    finished: dict[RecordKey, dict] = field(default_factory=dict)  # record meta of every finished record
    checks: list[Check] = field(default_factory=list)
    runs: list[dict] = field(default_factory=list)
    interruption: str | None = None
    complete: bool = False
    closed: bool = False  # set when the session finishes
    recorded_reference: str | None = None
    notes: list[str] = field(default_factory=list)
    localize: dict | None = None  # --localize's answer on a split (report/localized.py); the key only when set
    states: dict[str, Any] = field(default_factory=dict)  # check kind -> its CheckState (oracle/checks/<kind>/)
    # What the seal of the run's last write names beside its files (store/seal.py): the reference gated against
    # (its manifest hash) and the options its verdicts were judged under. Written in the seal, not as a section.
    # Not in as_json (the xdist controller has its own, from the same plan): left out of equality.
    sealing: dict = field(default_factory=dict, compare=False)

    # -- filling ---------------------------------------------------------------------------
    def apply(self, findings: dict) -> None:
        """Merge a producer's findings: dict fields are updated, list fields extended, the rest replaced."""
        for name, value in findings.items():
            owner = self._owner(name)
            if owner is not None:  # a check's own key: its state says how it is filled
                owner.apply(name, value)
                continue
            current = getattr(self, name)
            if isinstance(current, dict) and isinstance(value, dict):
                current.update(value)
            elif isinstance(current, list) and isinstance(value, list):
                current.extend(v for v in value if v not in current)
            else:
                setattr(self, name, value)

    def _owner(self, key: str):
        return next((s for s in self.states.values() if key in s.KEYS), None)

    def judged(self, check: Check) -> None:
        """Keep the check (replacing an earlier one with its id)."""
        self.checks = [c for c in self.checks if c.id != check.id] + [check]

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def note_item(self, head: str, item: str) -> None:
        """One note per head that lists its items ('head: a, b'): the item added to it."""
        prefix = f"{head}: "
        for i, text in enumerate(self.notes):
            if text.startswith(prefix):
                if item not in text[len(prefix):].split(", "):
                    self.notes[i] = f"{text}, {item}"
                return
        self.notes.append(prefix + item)

    # -- reading ---------------------------------------------------------------------------
    def verdict(self) -> str:
        # Final only once the pytest session has finished: a report on disk mid-run (or after a kill) is partial.
        if not self.complete or self.interruption or not self.closed:
            return "partial"
        return "pass" if all(c.outcome == "passed" for c in self.checks) else "fail"

    def _primary(self) -> set[str]:
        return {k.record for k in self.finished if k.condition == PRIMARY and k.server is None}

    def missing(self) -> list[str]:
        done = self._primary()
        return [p for p in self.prompt_ids if p not in done]

    def summary(self) -> dict:
        """The headline counts: each check state's own (`summary(report)`: the prompts' verdicts come from the
        tokens check's), then those over every check and record, each at its place (`PLACES`)."""
        out = {
            "inconclusive": sum(c.verdict == INCONCLUSIVE for c in self.checks),
            "contaminated": sum(c.verdict == CONTAMINATED for c in self.checks),
            "checks_passed": [sum(c.outcome == "passed" for c in self.checks), len(self.checks)],
            "records": [len(self._primary()), len(self.prompt_ids)],
            "records_all_conditions": len(self.finished),
        }
        for state in self.states.values():
            if hasattr(state, "summary"):
                out |= state.summary(self)
        out["confidence"] = self._confidence(out.get("exact") or [0, 0])  # no per-prompt check: 0 of 0
        return self._placed(out, "summary.")

    def _confidence(self, exact: list[int]) -> dict:
        """The summary's counts of like trials with their Wilson 95% intervals (docs/confidence.md): exact
        prompts, each check state's own (`confidence(report)`: boots agreeing with boot 1, each canary family), c1
        prompts that two servers both ran."""
        out = {"exact": count_json(*exact)}
        for state in self.states.values():
            if hasattr(state, "confidence"):
                out |= state.confidence(self)
        cross = self.identity.get("servers_c1_crosscheck") or {}
        if cross.get("identical") or cross.get("different"):
            same = cross["identical"]
            out["servers_c1"] = count_json(same, same + len(cross["different"]))
        return self._placed(out, "confidence.")

    def _placed(self, out: dict, prefix: str = "") -> dict:
        """`out` with each key at its place (`PLACES`: the report's, then each check state's), the keys without
        one after them in the order they came."""
        places = dict(PLACES)
        for state in self.states.values():
            places |= getattr(state, "PLACES", {})
        return dict(sorted(out.items(), key=lambda kv: places.get(prefix + kv[0], float("inf"))))

    def as_json(self) -> dict:
        return {
            "schema_version": REPORT_SCHEMA_VERSION,
            "verdict": self.verdict(),
            "mode": self.mode,
            "backend": self.backend,
            "started_utc": self.started_utc,
            "written_utc": _utc(),
            "identity": self.identity,
            "suite": self.suite,
            "prompts": self.prompt_ids,
            "reference": self.reference,
            "recorded_reference": self.recorded_reference,
            "summary": self.summary(),
            "checks": [c.as_dict() for c in self.checks],
            **self._sections(),
            "runs": self.runs,
            "missing": self.missing(),
            "interruption": self.interruption,
            "complete": self.complete,
            "closed": self.closed,
            "notes": self.notes,
            "records": {"folder": "records", "finished": {str(k): v for k, v in self.finished.items()}},
            **({"localize": self.localize} if self.localize else {}),
        }

    def _sections(self) -> dict:
        """The sections between `checks` and `runs`: each check state's, each at its place (`PLACES`)."""
        out = {}
        for state in self.states.values():
            out.update(state.to_json())
        return self._placed(out)

    @classmethod
    def from_json(cls, data: dict, states: Mapping[str, type] | None = None) -> "ReportState":
        """The state back from its `as_json()` (typed again: record keys, checks); what as_json derives (verdict,
        summary, missing, written_utc) is computed again, not read. A report written before `backend`, `complete` and
        `closed` were kept reads them from the identity and the verdict. states: the check kinds whose states
        are read (kind -> its CheckState class; oracle.checks.STATE_TYPES); the keys of any other are not read."""
        finished = (data.get("records") or {}).get("finished") or {}
        done = data.get("verdict") not in (None, "partial")
        return cls(
            mode=data["mode"],
            backend=data.get("backend", (data.get("identity") or {}).get("backend", "")),
            started_utc=data["started_utc"],
            identity=data.get("identity") or {},
            suite=data.get("suite") or {},
            reference=data.get("reference"),
            prompt_ids=list(data.get("prompts") or []),
            finished={RecordKey.parse(k): v for k, v in finished.items()},
            checks=[Check(**c) for c in data.get("checks") or []],
            runs=list(data.get("runs") or []),
            interruption=data.get("interruption"),
            complete=data.get("complete", done),
            closed=data.get("closed", done),
            recorded_reference=data.get("recorded_reference"),
            notes=list(data.get("notes") or []),
            localize=data.get("localize"),
            states={kind: state.from_json(data) for kind, state in (states or {}).items()},
        )
