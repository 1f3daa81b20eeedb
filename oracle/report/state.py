"""Everything the identity report says, as one object that serialises itself and merges workers' states.

    state = ReportState(mode="gate", backend="llamacpp")
    state.apply({"ladder": {"c8": summary}, "determinism": "within-boot"})   # a check producer's findings
    data = state.as_json()                                                    # identity.json
    state.merge(payloads, workers=2, root=report_dir, allow_mixed=False)      # the xdist controller
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from oracle.canary.results import family_counts
from oracle.compare.conditions import boots_agreeing
from oracle.compare.confidence import count_json
from oracle.compare.noise import UNMEASURED, determinism_of
from oracle.compare.verdicts import DIVERGENT, EXACT, FAIL, INCONCLUSIVE, NEAR_TIE, NOT_RUN, WITHIN_NOISE, Check
from oracle.gate.placement import server_label
from oracle.gate.server_set import differences
from oracle.speed.card import merge_cards
from oracle.store.records import PRIMARY, RecordKey

__all__ = ["REPORT_SCHEMA_VERSION", "ReportState"]

REPORT_SCHEMA_VERSION = 2  # 2: the speed card (`speed`), Wilson intervals on counts; see docs/report-schema.md


def _utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


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
    speculation: dict | None = None
    cache: dict | None = None
    evidence: dict | None = None  # which evidence the server gave (ids or text, logprobs, cached tokens, counters)
    canaries: dict[str, dict] = field(default_factory=dict)  # item id -> expected, extracted, raw text, verdict
    ladder: dict[str, dict] = field(default_factory=dict)  # "c8" -> counts, first divergences, overlap, verdict
    boots: dict[str, dict] = field(default_factory=dict)  # "2" -> counts, first divergences, verdict
    determinism: str = UNMEASURED
    interruption: str | None = None
    complete: bool = False
    closed: bool = False  # set when the session finishes
    recorded_reference: str | None = None
    notes: list[str] = field(default_factory=list)
    speed: dict | None = None  # the speed card of the primary run (and its comparison with the reference)
    logits: dict | None = None  # KLD / Same top p against the reference (gate), or the reference's floor (record)
    coverage: dict[str, dict] = field(default_factory=dict)  # run (boot1-c4) -> condition -> held, detail, how

    # -- filling ---------------------------------------------------------------------------
    def apply(self, findings: dict) -> None:
        """Merge a producer's findings: dict fields are updated, list fields extended, the rest replaced."""
        for name, value in findings.items():
            current = getattr(self, name)
            if isinstance(current, dict) and isinstance(value, dict):
                current.update(value)
            elif isinstance(current, list) and isinstance(value, list):
                current.extend(v for v in value if v not in current)
            else:
                setattr(self, name, value)

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
        tokens = [c for c in self.checks if c.kind == "tokens"]
        count = lambda v: sum(c.verdict == v for c in tokens)  # noqa: E731
        # Against an f16 reference the gate is on logits: no token item, so no "0/N exact".
        tokens_gated = bool(tokens) or not any(c.kind == "logits" for c in self.checks)
        overall = (self.logits or {}).get("overall") or {}
        exact = [count(EXACT), len(self.prompt_ids) if self.mode == "gate" and tokens_gated else len(tokens)]
        return {
            "exact": exact,
            "logits": ({"mean_kld": overall["mean_kld"], "same_top1": overall["same_top1"],
                        "positions": overall["positions"]} if overall.get("positions") else None),
            "near_tie": count(NEAR_TIE),
            "divergent": count(DIVERGENT),
            "within_reference_noise": count(WITHIN_NOISE),
            "inconclusive": sum(c.verdict == INCONCLUSIVE for c in self.checks),
            "not_run": count(NOT_RUN),
            "checks_passed": [sum(c.outcome == "passed" for c in self.checks), len(self.checks)],
            "records": [len(self._primary()), len(self.prompt_ids)],
            "records_all_conditions": len(self.finished),
            "confidence": self._confidence(exact),
        }

    def _confidence(self, exact: list[int]) -> dict:
        """The summary's counts of like trials with their Wilson 95% intervals (docs/confidence.md): exact
        prompts, boots agreeing with boot 1, each canary family, c1 prompts that two servers both ran."""
        out = {"exact": count_json(*exact)}
        if self.boots:
            out["boots"] = count_json(*boots_agreeing(self.boots))
        canaries = family_counts(self.canaries)
        if canaries:
            out["canaries"] = {family: count_json(k, n) for family, (k, n) in canaries.items()}
        cross = self.identity.get("servers_c1_crosscheck") or {}
        if cross.get("identical") or cross.get("different"):
            same = cross["identical"]
            out["servers_c1"] = count_json(same, same + len(cross["different"]))
        return out

    def as_json(self) -> dict:
        return {
            "schema_version": REPORT_SCHEMA_VERSION,
            "verdict": self.verdict(),
            "mode": self.mode,
            "started_utc": self.started_utc,
            "written_utc": _utc(),
            "identity": self.identity,
            "suite": self.suite,
            "prompts": self.prompt_ids,
            "reference": self.reference,
            "recorded_reference": self.recorded_reference,
            "summary": self.summary(),
            "checks": [c.as_dict() for c in self.checks],
            "speculation": self.speculation,
            "cache": self.cache,
            "evidence": self.evidence,
            "canaries": self.canaries,
            "ladder": self.ladder,
            "boots": self.boots,
            "determinism": self.determinism if (self.ladder or self.boots) else None,
            "logits": self.logits,
            "speed": self.speed,
            "coverage": self.coverage,
            "runs": self.runs,
            "missing": self.missing(),
            "interruption": self.interruption,
            "notes": self.notes,
            "records": {"folder": "records", "finished": {str(k): v for k, v in self.finished.items()}},
        }

    # -- several workers -------------------------------------------------------------------
    def merge(self, payloads: dict[int, dict | None], *, workers: int, root: Path, allow_mixed: bool) -> dict:
        """Fill this (the controller's) state from the workers' payloads; return the merged condition rows.

        A payload is what `gate.controller.worker_payload` sent: the worker's `as_json()` under "state", its
        condition rows, server index, URL and the prompts it owned at c1."""
        rows: dict[str, list[dict]] = {}
        servers, identities, problems, spec_parts, cache_parts, speed_parts = [], {}, [], [], {}, []
        complete = True
        for index in range(workers):
            label = server_label(index)
            p = payloads.get(index)
            if p is None:
                complete = False
                problems.append(f"{label} (worker gw{index}) sent no results: it crashed or was stopped; its partial "
                                f"report and records are in {root / 'servers' / label}")
                continue
            data = p["state"]
            owned = set(p["owned"]) if p["owned"] is not None else set(data["prompts"])
            if not servers:  # the first worker that answered: the selected prompts are the same on every worker
                self.prompt_ids = list(data["prompts"])
                self.suite = data["suite"]
            ident = data["identity"]
            if ident:
                identities[label] = ident
                if not self.identity:
                    self.identity = {k: v for k, v in ident.items() if k not in ("url", "boots")}
            servers.append({"label": label, "worker": f"gw{index}", "url": p["url"],
                            "launch_command": ident.get("launch_command"), "server": ident.get("server"),
                            "boots": ident.get("boots"), "report": str(Path("servers") / label),
                            "prompts_at_c1": sorted(owned), "verdict": data["verdict"],
                            "checks": [c["id"] for c in data["checks"]],
                            "failed": [c["id"] for c in data["checks"] if c["outcome"] == "failed"]})
            folder = str(Path("servers") / label / "records")
            for meta in data["records"]["finished"].values():
                key = RecordKey.of_meta(meta)
                owner = key.condition == PRIMARY and key.record in owned
                self.finished[key if owner else key.on(label)] = meta | {"server": label, "folder": folder}
            self.checks += [Check(**c) for c in data["checks"]]
            self.runs += [r | {"server": label} for r in data["runs"]]
            if data.get("speculation"):
                spec_parts.append(data["speculation"])
            if data.get("cache"):
                cache_parts[label] = data["cache"]
            if data.get("speed"):
                speed_parts.append(data["speed"])
            self.canaries.update(data.get("canaries") or {})
            self.evidence = self.evidence or data.get("evidence")
            self.ladder.update({k: v | {"server": label} for k, v in (data.get("ladder") or {}).items()})
            self.boots.update({k: v | {"server": label} for k, v in (data.get("boots") or {}).items()})
            # Every server runs boot1-c1: each server's runs are kept apart, as run@server.
            self.coverage.update({f"{k}@{label}": v for k, v in (data.get("coverage") or {}).items()})
            rows.update(p["condition_rows"])
            if data.get("interruption"):
                problems.append(f"{label}: {data['interruption']}")
            self.notes += [f"{label}: {n}" for n in data.get("notes") or []]
            complete = complete and data["verdict"] != "partial"
        self.ladder = dict(sorted(self.ladder.items(), key=lambda kv: int(kv[0].removeprefix("c"))))
        self.boots = dict(sorted(self.boots.items(), key=lambda kv: int(kv[0])))
        self.identity["servers"] = servers
        self.identity["servers_c1_crosscheck"] = self._c1_crosscheck()
        self.speculation = _merged_speculation(spec_parts)
        self.cache = _merged_cache(cache_parts)
        self.speed = merge_cards(speed_parts, servers=workers)
        mismatch = differences(identities) if len(identities) > 1 else []
        if mismatch:
            if allow_mixed:
                self.notes.append("the servers differ (--allow-mixed-servers): " + "; ".join(mismatch))
            else:
                self.checks.append(Check("servers", "servers", FAIL, f"the {len(identities)} servers are not one "
                                         f"configuration: {len(mismatch)} identity field(s) differ",
                                         [f"  {m}" for m in mismatch], {"differences": mismatch}, outcome="failed"))
        if problems:
            self.interruption = "; ".join(problems)
        self.determinism = determinism_of(rows)
        self.complete = complete
        return rows

    def _c1_crosscheck(self) -> dict:
        """Prompts that a ladder or boot server also ran at c1 (its baseline), against the owner's c1 record:
        servers of one configuration give the same tokens."""
        same, differ = [], []
        for key, meta in self.finished.items():
            owner = self.finished.get(key.on(None))
            if key.condition != PRIMARY or key.server is None or owner is None:
                continue
            row = f"{key.record}: {owner['server']} vs {key.server}"
            (same if meta.get("completion_sha256") == owner.get("completion_sha256") else differ).append(row)
        return {"identical": len(same), "different": differ}


def _merged_speculation(parts: list[dict]) -> dict | None:
    if not parts:
        return None
    from oracle.compare.evidence import speculation_totals

    per_request = {k: v for p in parts for k, v in (p.get("per_request") or {}).items()}
    known = [p for p in parts if p.get("drafted") is not None]
    if not known:
        return {"drafted": None, "accepted": None, "source": None, "per_request": per_request}
    totals = speculation_totals(drafted=sum(p["drafted"] for p in known),
                                accepted=sum(p.get("accepted") or 0 for p in known),
                                drafts=sum(p.get("drafts") or 0 for p in known))
    return {"drafted": totals.pop("drafted"), "accepted": totals.pop("accepted"),
            "source": ", ".join(sorted({str(p["source"]) for p in known})), "per_request": per_request, **totals}


def _merged_cache(parts: dict[str, dict]) -> dict | None:
    if not parts:
        return None
    order = ["fail", "inconclusive", "pass"]
    verdicts = [p.get("verdict") for p in parts.values()]
    verdict = next((v for v in order if v in verdicts), verdicts[0])
    return {"verdict": verdict,
            "requests": sum(p.get("requests") or 0 for p in parts.values()),
            "requests_with_cache_field": sum(p.get("requests_with_cache_field") or 0 for p in parts.values()),
            "cached_requests": {f"{k}@{label}": v for label, p in parts.items()
                                for k, v in (p.get("cached_requests") or {}).items()},
            "counter_deltas": {label: p.get("counter_deltas") for label, p in parts.items()},
            "servers": parts}
