"""A report folder as ledger rows: what a run found, read from its identity.json (any schema version oracle
writes), keyed by that file's sha256; per prompt its output fingerprint (`fingerprints`).

    row = run_row(Path("reports/20261205T133605Z-llamacpp-cpu"), added_by="run")
    row.run["verdict"], row.prompts[0], row.identity_sha256
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from oracle.ledger.audit import AuditFailed, audit_report
from oracle.ledger.fingerprints import fingerprints
from oracle.redaction import public_data
from oracle.store.machine import accelerator_model
from oracle.store.reference import manifest_digest

__all__ = ["LedgerInputError", "RunRow", "config_of", "run_row"]

_PROMPT_KINDS = ("tokens", "record")  # the per-prompt checks: gate runs judge tokens, record runs record
_FINGERPRINT = ("completion_sha256", "finish_reason", "fingerprint", "top_sha256")
_SPEEDUPS = ("vs_reference", "vs_recorded_reference")  # the speed card's comparisons, in order of preference


class LedgerInputError(ValueError):
    """A folder that is not a report oracle wrote (or a damaged one); the message names the folder and the fix."""


@dataclass
class RunRow:
    identity_sha256: str
    run: dict
    prompts: list[dict] = field(default_factory=list)
    canaries: list[dict] = field(default_factory=list)


def run_row(folder: Path, *, added_by: str) -> RunRow:
    """The rows of one report folder; LedgerInputError when it holds no readable identity.json."""
    path = folder / "identity.json"
    try:
        raw = path.read_bytes()
        report = json.loads(raw)
    except FileNotFoundError:
        raise LedgerInputError(f"{folder}: no identity.json there; give a report folder written by oracle "
                               "(reports/<time>-<backend>/)") from None
    except (OSError, ValueError) as exc:
        raise LedgerInputError(f"{path}: cannot be read as JSON ({exc}); the report is damaged") from None
    if not isinstance(report, dict) or "mode" not in report or "started_utc" not in report:
        raise LedgerInputError(f"{path}: not an oracle identity report (no mode or started_utc)")
    try:
        audit = audit_report(folder, report)
    except AuditFailed as exc:
        raise LedgerInputError(f"{folder}: refused: {exc}; nothing was added") from None
    identity = public_data(report.get("identity") or {})
    summary = report.get("summary") or {}
    exact = summary.get("exact") or [None, None]
    checks_passed = summary.get("checks_passed") or [None, None]
    backend = report.get("backend") or identity.get("backend") or "unknown"
    reference = _reference(report)
    reference_sha256 = _reference_sha256(report)
    machine = identity.get("machine") or {}
    run = {
        "report_dir": str(folder.resolve()),
        "schema_version": int(report.get("schema_version") or 1),
        "started_utc": report["started_utc"],
        "mode": report["mode"],
        "verdict": report.get("verdict") or "partial",
        "machine": machine.get("name") or (identity.get("host") or {}).get("hostname") or "unknown",
        "accelerator": _accelerator(identity),
        "accelerator_model": machine.get("accelerator")
        or accelerator_model(identity.get("accelerator") or {}, identity.get("host") or {}),
        "runtime": machine.get("runtime"),
        "backend": backend,
        "config": config_of(backend, reference, reference_sha256),
        "reference": reference,
        "reference_sha256": reference_sha256,
        "launch_command": identity.get("launch_command"),
        "server_args": identity.get("server_args"),
        "model_sha256": (identity.get("model") or {}).get("sha256"),
        "driver": machine.get("driver") or _driver(identity),
        "build": (identity.get("server") or {}).get("build"),
        "identity_json": json.dumps(identity, sort_keys=True),
        "prompts_exact": exact[0], "prompts_total": exact[1],
        "near_tie": summary.get("near_tie"), "divergent": summary.get("divergent"),
        "inconclusive": summary.get("inconclusive"),
        "checks_passed": checks_passed[0], "checks_total": checks_passed[1],
        **_speed(report.get("speed") or {}),
        "interruption": report.get("interruption"),
        "added_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "added_by": added_by,
        "audit": audit.status,
        "audit_note": audit.reason or None,
    }
    return RunRow(hashlib.sha256(raw).hexdigest(), run, _prompts(report, folder), _canaries(report))


def config_of(backend: str, reference: str | None, reference_sha256: str | None = None) -> str:
    """What a run is one of, over time and across machines: the backend and the reference it was gated against
    (or recorded), named by its manifest's sha256 where the report says it (the same reference copied to each
    machine is one config), else by its path (reports written before)."""
    if reference_sha256:
        return f"{backend} vs reference {reference_sha256[:16]}"
    return f"{backend} vs {reference}" if reference else backend


def _reference(report: dict) -> str | None:
    ref = report.get("reference")
    path = ref.get("path") if isinstance(ref, dict) else ref
    return str(path or report.get("recorded_reference") or "") or None


def _reference_sha256(report: dict) -> str | None:
    """The gated reference's manifest sha256 as the report says it; a record run's from the manifest it wrote."""
    ref = report.get("reference")
    if isinstance(ref, dict) and isinstance(ref.get("manifest_sha256"), str):
        return ref["manifest_sha256"]
    recorded = report.get("recorded_reference")
    if not recorded or report.get("mode") != "record":
        return None
    try:
        manifest = json.loads((Path(recorded) / "manifest.json").read_bytes())
    except (OSError, ValueError):
        return None  # moved or never sealed: the run is keyed by its path
    return manifest_digest(manifest) if isinstance(manifest, dict) else None


def _accelerator(identity: dict) -> str | None:
    found = identity.get("accelerator") or {}
    for probe in ("nvidia-smi", "xpu-smi", "sycl-ls", "rocm-smi"):
        if found.get(probe):
            return str(found[probe]).splitlines()[0][:200]
    return (identity.get("host") or {}).get("cpu")


def _driver(identity: dict) -> str | None:
    modules = (identity.get("accelerator") or {}).get("kernel_modules") or {}
    return ", ".join(f"{k} {v}" for k, v in sorted(modules.items())) or None


def _speed(card: dict) -> dict:
    """The card's headline figure (median over prompts, its p10..max spread as the band), its speed-up against the
    reference with the 95% interval, and energy per token."""
    figure = next((f for f in ("conventional_tok_s", "after_ttft_tok_s") if (card.get("summary") or {}).get(f)), None)
    stats = (card.get("summary") or {}).get(figure) or {}
    versus = next((card[k] for k in _SPEEDUPS if isinstance(card.get(k), dict) and card[k].get("median")), {})
    ci = versus.get("ci95") or [None, None]
    return {"speed_label": card.get("label"), "speed_figure": figure, "tok_s": stats.get("median"),
            "tok_s_low": stats.get("p10"), "tok_s_high": stats.get("max"), "speedup": versus.get("median"),
            "speedup_low": ci[0], "speedup_high": ci[1], "speedup_interval": versus.get("interval"),
            "joules_per_token": (card.get("power") or {}).get("joules_per_token")}


def _prompts(report: dict, folder: Path) -> list[dict]:
    out = {}
    found = fingerprints(report, folder)
    for check in report.get("checks") or []:
        cid = check.get("id", "")
        if check.get("kind") in _PROMPT_KINDS and "[" in cid:
            split = (check.get("evidence") or {}).get("first_divergence")
            verdict = check.get("verdict")
            if check.get("kind") == "record" and verdict == "pass":
                verdict = "recorded"  # a record run's prompt has nothing to be exact against
            name = cid[cid.index("[") + 1:-1]
            out[name] = {"prompt": name, "verdict": verdict, "first_split": split if isinstance(split, int) else None,
                         **(found.get(name) or dict.fromkeys(_FINGERPRINT))}
    return [r for r in out.values() if r["verdict"]]


def _canaries(report: dict) -> list[dict]:
    rows = report.get("canaries") or {}
    return [{"canary": k, "verdict": v.get("verdict") or ("pass" if v.get("ok") else "wrong")}
            for k, v in sorted(rows.items()) if isinstance(v, dict)]
