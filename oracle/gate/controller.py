"""One report from several xdist workers: each worker's state, as it sent it, merged on the controller.

Each worker writes its own partial report and records under `servers/serverK/` as it goes (so a
crash loses nothing) and, when it finishes, sends its state through `workeroutput`. The controller
merges those states into the top-level identity report with a per-server section, and, when
recording, writes the reference from each prompt's c1 record on the server that owned it.
"""

from __future__ import annotations

import json
from pathlib import Path

from oracle.compare.noise import classify_determinism
from oracle.gate.placement import server_label
from oracle.store.records import Condition, Record, load_record
from oracle.report.writer import ReportState
from oracle.gate.server_set import differences
from oracle.compare.verdicts import FAIL, Check

__all__ = ["merge_states", "owned_records", "worker_payload"]

_PRIMARY = Condition()


def worker_payload(gate) -> dict:
    """What a worker sends the controller: plain data only (execnet ships builtins)."""
    data = json.loads(json.dumps(gate.state.as_json(), default=str))
    return {"server": gate.server_index, "url": gate.backend.base_url if gate.backend else gate.url,
            "owned": sorted(gate.owned) if gate.owned is not None else None,
            "report_dir": str(gate.report_dir), "state": data,
            "condition_rows": json.loads(json.dumps(gate.condition_rows, default=str))}


def merge_states(state: ReportState, payloads: dict[int, dict | None], *, workers: int, root: Path,
                 allow_mixed: bool) -> dict[str, list[dict]]:
    """Fill the controller's state from the workers' payloads; return the merged condition rows."""
    rows: dict[str, list[dict]] = {}
    servers, identities, problems = [], {}, []
    spec_parts, cache_parts = [], {}
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
            state.prompt_ids = list(data["prompts"])
            state.suite = data["suite"]
        ident = data["identity"]
        if ident:
            identities[label] = ident
            if not state.identity:
                state.identity = {k: v for k, v in ident.items() if k not in ("url", "boots")}
        servers.append({"label": label, "worker": f"gw{index}", "url": p["url"],
                        "launch_command": ident.get("launch_command"), "server": ident.get("server"),
                        "boots": ident.get("boots"), "report": str(Path("servers") / label),
                        "prompts_at_c1": sorted(owned), "verdict": data["verdict"],
                        "checks": [c["id"] for c in data["checks"]],
                        "failed": [c["id"] for c in data["checks"] if c["outcome"] == "failed"]})
        folder = str(Path("servers") / label / "records")
        for key, meta in data["records"]["finished"].items():
            rid, _, cond = key.partition("@")
            primary = cond == _PRIMARY.key and rid in owned
            state.finished[key if primary else f"{key}@{label}"] = meta | {"server": label, "folder": folder}
        state.checks += [Check(**c) for c in data["checks"]]
        state.runs += [r | {"server": label} for r in data["runs"]]
        if data.get("speculation"):
            spec_parts.append(data["speculation"])
        if data.get("cache"):
            cache_parts[label] = data["cache"]
        state.canaries.update(data.get("canaries") or {})
        state.evidence = state.evidence or data.get("evidence")
        state.ladder.update({k: v | {"server": label} for k, v in (data.get("ladder") or {}).items()})
        state.boots.update({k: v | {"server": label} for k, v in (data.get("boots") or {}).items()})
        for key, condition_rows in p["condition_rows"].items():
            rows[key] = condition_rows
        if data.get("interruption"):
            problems.append(f"{label}: {data['interruption']}")
        state.notes += [f"{label}: {n}" for n in data.get("notes") or []]
        complete = complete and data["verdict"] != "partial"
    state.ladder = dict(sorted(state.ladder.items(), key=lambda kv: int(kv[0].removeprefix("c"))))
    state.boots = dict(sorted(state.boots.items(), key=lambda kv: int(kv[0])))
    state.identity["servers"] = servers
    state.identity["servers_c1_crosscheck"] = _c1_crosscheck(state.finished)
    state.speculation = _merged_speculation(spec_parts)
    state.cache = _merged_cache(cache_parts)
    mismatch = differences(identities) if len(identities) > 1 else []
    if mismatch:
        lines = [f"  {m}" for m in mismatch]
        if allow_mixed:
            state.notes.append("the servers differ (--allow-mixed-servers): " + "; ".join(mismatch))
        else:
            state.checks.append(Check("servers", "servers", FAIL, f"the {len(identities)} servers are not one "
                                      f"configuration: {len(mismatch)} identity field(s) differ", lines,
                                      {"differences": mismatch}, outcome="failed"))
    if problems:
        state.interruption = "; ".join(problems)
    repeat = rows.get(Condition(run=2).key)
    state.determinism = classify_determinism(repeat, [r for k, r in rows.items() if not k.startswith("boot1-")])
    state.complete = complete
    return rows


def owned_records(state: ReportState, root: Path) -> list[Record]:
    """Each prompt's c1 record from the server that ran it as its own (for the reference)."""
    out = []
    for pid in state.prompt_ids:
        meta = state.finished.get(f"{pid}@{_PRIMARY.key}")
        if meta is None:
            continue
        out.append(load_record(root / meta["folder"], _PRIMARY, pid))
    return out


def _c1_crosscheck(finished: dict[str, dict]) -> dict:
    """Prompts that a ladder or boot server also ran at c1 (its baseline), against the owner's c1 record:
    servers of one configuration give the same tokens."""
    same, differ = [], []
    for key, meta in finished.items():
        rid, _, rest = key.partition("@")
        cond, _, label = rest.partition("@")
        owner = finished.get(f"{rid}@{cond}")
        if cond != _PRIMARY.key or not label or owner is None:
            continue
        row = f"{rid}: {owner['server']} vs {label}"
        (same if meta.get("completion_sha256") == owner.get("completion_sha256") else differ).append(row)
    return {"identical": len(same), "different": differ}


def _merged_speculation(parts: list[dict]) -> dict | None:
    if not parts:
        return None
    per_request = {k: v for p in parts for k, v in (p.get("per_request") or {}).items()}
    known = [p for p in parts if p.get("drafted") is not None]
    if not known:
        return {"drafted": None, "accepted": None, "source": None, "per_request": per_request}
    drafted = sum(p["drafted"] for p in known)
    accepted = sum(p.get("accepted") or 0 for p in known)
    out = {"drafted": drafted, "accepted": accepted, "source": ", ".join(sorted({str(p["source"]) for p in known})),
           "per_request": per_request}
    if drafted:
        out["rate"] = accepted / drafted
    drafts = sum(p.get("drafts") or 0 for p in known)
    if drafts:
        out["drafts"] = drafts
        out["mean_accepted_length"] = accepted / drafts
    return out


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
