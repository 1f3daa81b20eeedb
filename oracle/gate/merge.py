"""The xdist controller's merge: each worker's payload typed again as a `ReportState`, then the one report made
field by field, each field by its own rule in `MERGE_RULES` (a test checks that every `ReportState` field has one,
so a new field cannot silently disappear under `pytest -n`).

    rows = merge_workers(state, payloads, workers=2, root=report_dir, allow_mixed=False)  # payloads: index -> dict
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from oracle.checks import read_state
from oracle.compare.evidence import speculation_totals
from oracle.compare.noise import determinism_of
from oracle.compare.sampled import match_rate_json
from oracle.compare.verdicts import FAIL, Check
from oracle.gate.placement import server_label
from oracle.gate.server_set import differences
from oracle.report.state import ReportState
from oracle.speed.card import merge_cards
from oracle.store.records import PRIMARY, RecordKey

__all__ = ["MERGE_RULES", "Merge", "Worker", "merge_workers"]


@dataclass(frozen=True)
class Worker:
    """One worker's results as the controller holds them (`gate.controller.worker_payload`, typed again)."""

    index: int
    state: ReportState
    url: str | None
    owned: frozenset[str]  # the prompts it ran at c1 as their owner (all its prompts without a placement)
    condition_rows: dict[str, list[dict]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return server_label(self.index)

    @classmethod
    def of_payload(cls, index: int, payload: dict) -> "Worker":
        state = read_state(payload["state"])
        owned = payload["owned"] if payload["owned"] is not None else state.prompt_ids
        return cls(index, state, payload["url"], frozenset(owned), payload["condition_rows"])


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
    def rows(self) -> dict[str, list[dict]]:
        """The condition rows of every worker (each condition ran on one server)."""
        return {k: v for w in self.workers for k, v in w.condition_rows.items()}

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
        out = {k: v for k, v in first.items() if k not in ("url", "boots")}
    out["servers"] = [_server_row(w) for w in m.workers]
    out["servers_c1_crosscheck"] = _c1_crosscheck(m.finished)
    return out


def _server_row(w: Worker) -> dict:
    ident, checks = w.state.identity, w.state.checks
    return {"label": w.label, "worker": f"gw{w.index}", "url": w.url,
            "launch_command": ident.get("launch_command"), "server": ident.get("server"),
            "boots": ident.get("boots"), "report": str(Path("servers") / w.label),
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


def _on_server(name: str, order: Callable[[str], int]) -> Callable[[Merge], dict]:
    """Conditions (ladder levels, boots): each ran whole on one server, which its row names."""
    def rule(m: Merge) -> dict:
        rows = dict(getattr(m.own, name))
        for w in m.workers:
            rows.update({k: v | {"server": w.label} for k, v in getattr(w.state, name).items()})
        return dict(sorted(rows.items(), key=lambda kv: order(kv[0])))
    return rule


def _evidence(m: Merge) -> dict | None:
    return m.own.evidence or next((w.state.evidence for w in m.workers if w.state.evidence), None)


def _speculation(m: Merge) -> dict | None:
    parts = [w.state.speculation for w in m.workers if w.state.speculation]
    if not parts:
        return None
    per_request = {k: v for p in parts for k, v in (p.get("per_request") or {}).items()}
    known = [p for p in parts if p.get("drafted") is not None]
    if not known:
        return {"drafted": None, "accepted": None, "source": None, "per_request": per_request}
    totals = speculation_totals(drafted=sum(p["drafted"] for p in known),
                                accepted=sum(p.get("accepted") or 0 for p in known),
                                drafts=sum(p.get("drafts") or 0 for p in known))
    return {"drafted": totals.pop("drafted"), "accepted": totals.pop("accepted"),
            "source": ", ".join(sorted({str(p["source"]) for p in known})), "per_request": per_request, **totals}


def _cache(m: Merge) -> dict | None:
    parts = {w.label: w.state.cache for w in m.workers if w.state.cache}
    if not parts:
        return None
    verdicts = [p.get("verdict") for p in parts.values()]
    verdict = next((v for v in ("fail", "inconclusive", "pass") if v in verdicts), verdicts[0])
    return {"verdict": verdict,
            "requests": sum(p.get("requests") or 0 for p in parts.values()),
            "requests_with_cache_field": sum(p.get("requests_with_cache_field") or 0 for p in parts.values()),
            "cached_requests": {f"{k}@{label}": v for label, p in parts.items()
                                for k, v in (p.get("cached_requests") or {}).items()},
            "counter_deltas": {label: p.get("counter_deltas") for label, p in parts.items()},
            "servers": parts}


def _states(m: Merge) -> dict:
    """Each check kind's state, merged by its own rule (`CheckState.merge`) from the workers' states."""
    return {kind: type(own).merge(own, [(w.label, w.state.states[kind]) for w in m.workers])
            for kind, own in m.own.states.items()}


def _c1_match(m: Merge) -> dict:
    """Every server's c1 prompts against the reference: the workers' counts added up."""
    parts = [w.state.token_match["c1"]["vs_reference"] for w in m.workers if "c1" in w.state.token_match]
    return {"vs_reference": match_rate_json([(p["k"], p["n"]) for p in parts])
            | {"records": sum(p["records"] for p in parts), "exact_records": sum(p["exact_records"] for p in parts)}}


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
    "speculation": _speculation,
    "cache": _cache,
    "evidence": _evidence,
    "ladder": _on_server("ladder", lambda level: int(level.removeprefix("c"))),
    "boots": _on_server("boots", int),
    "determinism": lambda m: determinism_of(m.rows),
    "interruption": _interruption,
    "complete": lambda m: not m.silent and all(w.state.verdict() != "partial" for w in m.workers),
    "closed": _own("closed"),  # the controller closes its own report
    "recorded_reference": _own("recorded_reference"),  # the controller writes the reference after the merge
    "notes": _notes,
    "speed": lambda m: merge_cards([w.state.speed for w in m.workers if w.state.speed], servers=m.count),
    # --speed-cells is refused under -n: the one worker that measured them, if any.
    "speed_cells": lambda m: next((w.state.speed_cells for w in m.workers if w.state.speed_cells), None),
    # Each condition ran on one server.
    "token_match": lambda m: {label: v for w in m.workers for label, v in w.state.token_match.items()}
                             | ({"c1": _c1_match(m)} if any("c1" in w.state.token_match for w in m.workers) else {}),
}


def merge_workers(state: ReportState, payloads: dict[int, dict | None], *, workers: int, root: Path,
                  allow_mixed: bool) -> dict[str, list[dict]]:
    """Fill the controller's state from the workers' payloads (every field by its rule); return the merged
    condition rows (for the reference a record run writes)."""
    merge = Merge(state, [Worker.of_payload(i, p) for i, p in sorted(payloads.items())
                            if p is not None and i < workers],
                  workers, root, allow_mixed)
    merged = {name: rule(merge) for name, rule in MERGE_RULES.items()}
    for name, value in merged.items():
        setattr(state, name, value)
    return merge.rows
