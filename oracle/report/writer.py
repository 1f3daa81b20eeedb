"""The identity report: identity.json (schema-versioned) and identity.md, beside the records.

Written at the start of a run (as `partial`), after every finished record, and at the end,
so a crash leaves the finished records and a partial report on disk.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from oracle.canary.results import markdown_lines as canary_markdown_lines
from oracle.compare.conditions import headline_counts
from oracle.report.html import render_html
from oracle.logits.report import headline as logits_headline, markdown_lines as logits_markdown_lines
from oracle.compare.noise import DETERMINISM_WORDS, NOT_WITHIN_BOOT, UNMEASURED
from oracle.store.records import atomic_write_bytes
from oracle.compare.verdicts import DIVERGENT, EXACT, INCONCLUSIVE, NEAR_TIE, NOT_RUN, WITHIN_NOISE, Check

__all__ = ["REPORT_SCHEMA_VERSION", "ReportState", "write_html", "write_report"]

REPORT_SCHEMA_VERSION = 1


@dataclass
class ReportState:
    """Everything the report says; the session fills it as the run goes."""

    mode: str  # record, gate or run
    backend: str
    started_utc: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    identity: dict = field(default_factory=dict)
    suite: dict = field(default_factory=dict)
    reference: dict | None = None
    prompt_ids: list[str] = field(default_factory=list)
    finished: dict[str, dict] = field(default_factory=dict)  # "id@condition" -> record meta
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
    logits: dict | None = None  # KLD / Same top p against the reference (gate), or the reference's floor (record)

    def verdict(self) -> str:
        # Final only once the pytest session has finished: a report on disk mid-run (or after a kill) is partial.
        if not self.complete or self.interruption or not self.closed:
            return "partial"
        return "pass" if all(c.outcome == "passed" for c in self.checks) else "fail"

    def missing(self) -> list[str]:
        done = {k.split("@")[0] for k in self.finished if k.endswith("@boot1-c1")}
        return [p for p in self.prompt_ids if p not in done]

    def summary(self) -> dict:
        tokens = [c for c in self.checks if c.kind == "tokens"]
        count = lambda v: sum(c.verdict == v for c in tokens)  # noqa: E731
        # Against an f16 reference the gate is on logits: no token item, so no "0/N exact".
        tokens_gated = bool(tokens) or not any(c.kind == "logits" for c in self.checks)
        overall = (self.logits or {}).get("overall") or {}
        return {
            "exact": [count(EXACT), len(self.prompt_ids) if self.mode == "gate" and tokens_gated else len(tokens)],
            "logits": ({"mean_kld": overall["mean_kld"], "same_top1": overall["same_top1"],
                        "positions": overall["positions"]} if overall.get("positions") else None),
            "near_tie": count(NEAR_TIE),
            "divergent": count(DIVERGENT),
            "within_reference_noise": count(WITHIN_NOISE),
            "inconclusive": sum(c.verdict == INCONCLUSIVE for c in self.checks),
            "not_run": count(NOT_RUN),
            "checks_passed": [sum(c.outcome == "passed" for c in self.checks), len(self.checks)],
            "records": [sum(k.endswith("@boot1-c1") for k in self.finished), len(self.prompt_ids)],
            "records_all_conditions": len(self.finished),
        }

    def as_json(self) -> dict:
        return {
            "schema_version": REPORT_SCHEMA_VERSION,
            "verdict": self.verdict(),
            "mode": self.mode,
            "started_utc": self.started_utc,
            "written_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
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
            "runs": self.runs,
            "missing": self.missing(),
            "interruption": self.interruption,
            "notes": self.notes,
            "records": {"folder": "records", "finished": self.finished},
        }


def _reference_unstable(data: dict) -> bool:
    return (data.get("reference") or {}).get("determinism") == NOT_WITHIN_BOOT


def _headline(state: ReportState, data: dict) -> str:
    s = data["summary"]
    verdict = data["verdict"].upper()
    logits = logits_headline(state.logits)
    tokens_gated = any(c.kind == "tokens" for c in state.checks) or not logits
    if state.mode == "gate" and not tokens_gated:
        head = f"{verdict}: {logits}"
    elif state.mode == "gate":
        head = (f"{verdict}: the reference is not deterministic run to run, so no token-exactness claim; "
                f"{s['exact'][0]}/{s['exact'][1]} matched it" if _reference_unstable(data)
                else f"{verdict}: {s['exact'][0]}/{s['exact'][1]} exact")
    else:
        head = f"{verdict}: {s['records'][0]}/{len(state.prompt_ids)} recorded"
    extra = headline_counts(state.ladder, state.boots)
    if logits and tokens_gated and state.mode == "gate":
        extra = [logits] + extra
    return head + (" · " + " · ".join(extra) if extra else "")


def _condition_lines(state: ReportState) -> list[str]:
    if not (state.ladder or state.boots):
        return []
    rows = [(level, v) for level, v in state.ladder.items()] + [(f"boot {b}", v) for b, v in state.boots.items()]
    on = any("server" in v for _, v in rows)  # several servers: say which one ran each condition
    lines = ["", f"Determinism: {DETERMINISM_WORDS[state.determinism]}.", "",
             "| condition | exact | near-tie | within noise | divergent | required | overlap | verdict | first divergences |"
             + (" server |" if on else ""),
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if on else "")]
    for name, v in rows:
        c = v["counts"]
        ov = v.get("overlap")
        overlap = f"{ov['reached']}/{ov['asked']}" + (f" (server {ov['server_peak']})" if ov.get("server_peak") is not None
                                                      else "") if ov else "-"
        firsts = ", ".join(map(str, v["first_divergences"][:8])) or "-"
        lines.append(f"| {name} | {c['exact']}/{v['records']} | {c['near-tie']} | {c['within-reference-noise']} | "
                     f"{c['divergent']} | {v['required']} | {overlap} | {v['verdict']} | {firsts} |"
                     + (f" {v.get('server', '-')} |" if on else ""))
    return lines


def _server_lines(ident: dict) -> list[str]:
    servers = ident.get("servers") or []
    if not servers:
        return []
    lines = ["", f"Servers ({len(servers)}, one pytest-xdist worker each; their own reports in `servers/`):", "",
             "| server | worker | url | prompts at c1 | checks | failed | verdict |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in servers:
        lines.append(f"| {s['label']} | {s['worker']} | {s['url']} | {len(s['prompts_at_c1'])} | {len(s['checks'])} | "
                     f"{', '.join(s['failed']) or '-'} | {s['verdict']} |")
    cross = ident.get("servers_c1_crosscheck") or {}
    if cross.get("identical") or cross.get("different"):
        lines += ["", f"c1 on two servers (ladder and boot baselines): {cross['identical']} identical, "
                      f"{len(cross['different'])} different" + (": " + "; ".join(cross["different"][:8])
                                                                 if cross["different"] else "")]
    return lines


def _markdown(state: ReportState, data: dict) -> str:
    ident = data["identity"]
    lines = [f"# oracle {state.mode}: {_headline(state, data)}", ""]
    if _reference_unstable(data):
        lines += ["**The reference is not deterministic run to run** (its own c1 repeat differed): verdicts against it "
                  "make no token-exactness claim.", ""]
    if data["interruption"]:
        lines += [f"**Stopped midway:** {data['interruption']}", "",
                  f"Missing prompts: {', '.join(data['missing']) or 'none'}", ""]
    lines += [f"- backend: `{ident.get('backend')}` (family {ident.get('family')}, platform "
              f"{ident.get('platform') or 'unspecified'})",
              f"- server build: {ident.get('server', {}).get('build')}",
              f"- model: {ident.get('model', {}).get('path')} (sha256 {str(ident.get('model', {}).get('sha256'))[:16]}…)",
              f"- suite: {data['suite'].get('name')} ({data['suite'].get('prompts')} prompts, sha256 "
              f"{str(data['suite'].get('sha256'))[:16]}…)"]
    if data["reference"]:
        lines.append(f"- reference: {data['reference']['path']} (kind {data['reference']['kind']})")
    if state.recorded_reference:
        lines.append(f"- recorded reference: {state.recorded_reference}")
    ev = data.get("evidence")
    if ev:
        counters = ev["counters"] if isinstance(ev["counters"], str) else ", ".join(ev["counters"])
        lines.append(f"- evidence the server gave: token ids {ev['token_ids']}; logprobs {ev['logprobs']}; "
                     f"cached tokens {ev['cached_tokens']}; counters {counters}")
    lines += _server_lines(ident)
    lines += canary_markdown_lines(state.canaries)
    lines += _condition_lines(state)
    lines += logits_markdown_lines(state.logits)
    spec = data["speculation"]
    if spec and spec.get("drafted") is not None:
        rate = f", rate {spec['rate']:.1%}" if spec.get("rate") is not None else ""
        mal = f", mean accepted length {spec['mean_accepted_length']:.2f}" if spec.get("mean_accepted_length") else ""
        per_pos = (f", accepted per draft position {', '.join(f'{v:g}' for v in spec['accepted_per_position'])}"
                   if spec.get("accepted_per_position") else "")
        lines.append(f"- speculation: drafted {spec['drafted']:g}, accepted {spec['accepted']:g}{rate}{mal}{per_pos} "
                     f"(from {spec['source']})")
    lines += ["", "| check | kind | verdict | outcome | detail |", "| --- | --- | --- | --- | --- |"]
    for c in data["checks"]:
        detail = c["detail"].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {c['id']} | {c['kind']} | {c['verdict']} | {c['outcome'] or 'pending'} | {detail} |")
    spec_rows = (spec or {}).get("per_request") or {}
    if spec_rows:
        lines += ["", "| request | drafted | accepted |", "| --- | --- | --- |"]
        lines += [f"| {k} | {v['drafted']} | {v['accepted']} |" for k, v in spec_rows.items()]
    if state.notes:
        lines += ["", "Notes:"] + [f"- {n}" for n in state.notes]
    return "\n".join(lines) + "\n"


def write_report(folder: Path, state: ReportState) -> dict:
    """identity.json and identity.md every time; identity.html once the run has ended (or stopped midway)."""
    data = state.as_json()
    atomic_write_bytes(folder / "identity.json", (json.dumps(data, indent=1, sort_keys=False, default=str) + "\n").encode())
    atomic_write_bytes(folder / "identity.md", _markdown(state, data).encode())
    if state.closed or state.interruption:
        write_html(folder, data)
    return data


def write_html(folder: Path, data: dict | None = None) -> Path:
    """identity.html from identity.json (read from folder when data is not given)."""
    if data is None:
        data = json.loads((folder / "identity.json").read_text())
    path = folder / "identity.html"
    atomic_write_bytes(path, render_html(data).encode())
    return path
