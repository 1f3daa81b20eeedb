"""The xdist controller's merge: each worker's payload typed again as a `ReportState`, then the one report made
field by field, each field by its own rule in `MERGE_RULES` (a test checks that every `ReportState` field has one,
so a new field cannot silently disappear under `pytest -n`).

    merge_workers(state, payloads, workers=2, root=report_dir, allow_mixed=False)  # payloads: index -> dict
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from oracle.checks import CHECKS, read_state
from oracle.compare.verdicts import FAIL, Check
from oracle.gate.placement import server_label
from oracle.gate.server_set import differences
from oracle.report.state import ReportState
from oracle.store.records import PRIMARY, RecordKey

__all__ = ["MERGE_RULES", "Merge", "Worker", "merge_workers"]

# Identity keys that belong to one server (a boot sequence's servers): in each server's row, not the run's.
SERVER_IDENTITY = tuple(key for check in CHECKS for key in check.server_identity)


@dataclass(frozen=True)
class Worker:
    """One worker's results as the controller holds them (`gate.controller.worker_payload`, typed again)."""

    index: int
    state: ReportState
    url: str | None
    owned: frozenset[str]  # the prompts it ran at c1 as their owner (all its prompts without a placement)

    @property
    def label(self) -> str:
        return server_label(self.index)

    @classmethod
    def of_payload(cls, index: int, payload: dict) -> "Worker":
        # What each check state carried beside the report (`carried()`) is read back with it, for its merge.
        state = read_state(payload["state"] | payload.get("carried", {}))
        owned = payload["owned"] if payload["owned"] is not None else state.prompt_ids
        return cls(index, state, payload["url"], frozenset(owned))


@dataclass
class Merge:
    """What every rule reads: the controller's own state (as it was before the merge) and the workers' results.
    The rules never write; `merge_workers` sets every field from their answers at the end."""

    own: ReportState
    workers: list[Worker]  # those that sent results, in worker order
    count: int  # workers started (pytest -n N)
    root: Path
    allow_mixed: bool

    @cached_property
    def silent(self) -> list[int]:
        """Workers that sent nothing (crashed or stopped)."""
        sent = {w.index for w in self.workers}
        return [i for i in range(self.count) if i not in sent]

    @cached_property
    def finished(self) -> dict[RecordKey, dict]:
        """Every record, under its owner's key at c1, else under the server that ran it; each points to the
        records folder of its server."""
        out = dict(self.own.finished)
        for w in self.workers:
            folder = str(Path("servers") / w.label / "records")
            for key, meta in w.state.finished.items():
                owner = key.condition == PRIMARY and key.record in w.owned
                out[key if owner else key.on(w.label)] = meta | {"server": w.label, "folder": folder}
        return out

    @cached_property
    def mismatch(self) -> list[str]:
        """The identity fields in which the servers differ."""
        identities = {w.label: w.state.identity for w in self.workers if w.state.identity}
        return differences(identities) if len(identities) > 1 else []


def _own(name: str) -> Callable[[Merge], object]:
    """The controller's own value (set by its plan or after the merge; the workers' copies say the same or less)."""
    return lambda m: getattr(m.own, name)


def _first(name: str) -> Callable[[Merge], object]:
    """The first answering worker's value (every worker selected the same prompts from the same suite); the
    controller's own when none answered."""
    return lambda m: getattr(m.workers[0].state if m.workers else m.own, name)


def _identity(m: Merge) -> dict:
    out = dict(m.own.identity)
    first = next((w.state.identity for w in m.workers if w.state.identity), None)
    if not out and first:
        out = {k: v for k, v in first.items() if k not in ("url",) + SERVER_IDENTITY}
    out["servers"] = [_server_row(w) for w in m.workers]
    out["servers_c1_crosscheck"] = _c1_crosscheck(m.finished)
    return out


def _server_row(w: Worker) -> dict:
    ident, checks = w.state.identity, w.state.checks
    return {"label": w.label, "worker": f"gw{w.index}", "url": w.url,
            "launch_command": ident.get("launch_command"), "server": ident.get("server"),
            **{key: ident.get(key) for key in SERVER_IDENTITY}, "report": str(Path("servers") / w.label),
            "prompts_at_c1": sorted(w.owned), "verdict": w.state.verdict(),
            "checks": [c.id for c in checks], "failed": [c.id for c in checks if c.outcome == "failed"]}


def _c1_crosscheck(finished: dict[RecordKey, dict]) -> dict:
    """Prompts that a ladder or boot server also ran at c1 (its baseline), against the owner's c1 record:
    servers of one configuration give the same tokens."""
    same, differ = [], []
    for key, meta in finished.items():
        owner = finished.get(key.on(None))
        if key.condition != PRIMARY or key.server is None or owner is None:
            continue
        row = f"{key.record}: {owner['server']} vs {key.server}"
        (same if meta.get("completion_sha256") == owner.get("completion_sha256") else differ).append(row)
    return {"identical": len(same), "different": differ}


def _checks(m: Merge) -> list[Check]:
    out = list(m.own.checks) + [c for w in m.workers for c in w.state.checks]
    if m.mismatch and not m.allow_mixed:
        n = sum(1 for w in m.workers if w.state.identity)
        out.append(Check("servers", "servers", FAIL, f"the {n} servers are not one configuration: "
                         f"{len(m.mismatch)} identity field(s) differ", [f"  {d}" for d in m.mismatch],
                         {"differences": m.mismatch}, outcome="failed"))
    return out


def _notes(m: Merge) -> list[str]:
    out = list(m.own.notes) + [f"{w.label}: {n}" for w in m.workers for n in w.state.notes]
    if m.mismatch and m.allow_mixed:
        out.append("the servers differ (--allow-mixed-servers): " + "; ".join(m.mismatch))
    return out


def _interruption(m: Merge) -> str | None:
    """Each worker that sent nothing or stopped midway, in worker order; else the controller's own."""
    said = {i: (f"{server_label(i)} (worker gw{i}) sent no results: it crashed or was stopped; its partial report "
                f"and records are in {m.root / 'servers' / server_label(i)}") for i in m.silent}
    said |= {w.index: f"{w.label}: {w.state.interruption}" for w in m.workers if w.state.interruption}
    return "; ".join(said[i] for i in sorted(said)) or m.own.interruption




def _states(m: Merge) -> dict:
    """Each check kind's state, merged by its own rule (`CheckState.merge`) from every started server's state, in
    worker order: a worker that sent nothing is an empty state (so a rule that counts the servers counts it)."""
    def parts(kind: str, own) -> list:
        sent = {w.index: (w.label, w.state.states[kind]) for w in m.workers}
        return [sent.get(i) or (server_label(i), type(own)()) for i in range(m.count)]
    return {kind: type(own).merge(own, parts(kind, own)) for kind, own in m.own.states.items()}


# Every ReportState field -> its value in the merged report. A field added to ReportState needs a rule here
# (tests/unit/gate/test_merge.py fails without one): say how the workers' values become one.
MERGE_RULES: dict[str, Callable[[Merge], object]] = {
    "states": _states,
    "mode": _own("mode"),
    "backend": _own("backend"),
    "started_utc": _own("started_utc"),
    "identity": _identity,
    "suite": _first("suite"),
    "reference": _own("reference"),
    "prompt_ids": _first("prompt_ids"),
    "finished": lambda m: m.finished,
    "checks": _checks,
    "runs": lambda m: list(m.own.runs) + [r | {"server": w.label} for w in m.workers for r in w.state.runs],
    "interruption": _interruption,
    "complete": lambda m: not m.silent and all(w.state.verdict() != "partial" for w in m.workers),
    "closed": _own("closed"),  # the controller closes its own report
    "recorded_reference": _own("recorded_reference"),  # the controller writes the reference after the merge
    "notes": _notes,
    "localize": _own("localize"),  # --localize runs on the controller, on the merged report (workers never do)
    "sealing": _own("sealing"),  # the controller seals the merged folder (workers' folders included) itself
}


def merge_workers(state: ReportState, payloads: dict[int, dict | None], *, workers: int, root: Path,
                  allow_mixed: bool) -> None:
    """Fill the controller's state from the workers' payloads (every field by its rule)."""
    merge = Merge(state, [Worker.of_payload(i, p) for i, p in sorted(payloads.items())
                            if p is not None and i < workers],
                  workers, root, allow_mixed)
    merged = {name: rule(merge) for name, rule in MERGE_RULES.items()}
    for name, value in merged.items():
        setattr(state, name, value)
