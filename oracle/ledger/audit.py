"""The audit: a report's stated verdict re-derived before the ledger believes it. Its seal first (every record and
log as the run wrote them, store/seal.py), then each prompt's verdict from its record against the reference, by the
gate's own code (`compare/prompt_verdict.judge_prompt`) under the options the run recorded, each canary's answer
by its family's rule (canary/rejudge.py) and its verdict by the gate's (canary/results.py), its completion against
the reference's token for token (canary/tokens.py), and every other item against the evidence stored beside it
(`audit_items.py`).

    audit = audit_report(folder, report)   # Audit("verified" | "unverified", why); AuditFailed naming the field

`unverified`: a report written before seals, or one whose reference is not at hand (moved, re-recorded, another
machine's): the ledger keeps it so and never shows it as a plain pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from oracle.compare.noise import NoiseEnvelope
from oracle.compare.prompt_verdict import judge_prompt
from oracle.compare.verdicts import NOT_RUN
from oracle.ledger.audit_items import canary_answers, canary_items, evidence_items, stated_items
from oracle.ledger.audit_logits import logits_items
from oracle.store.json_files import InputFileError
from oracle.store.records import PRIMARY, RecordKey, load_record
from oracle.store.reference import Reference, load_reference, manifest_digest
from oracle.store.seal import verify_seal

__all__ = ["AUDITS", "Audit", "AuditFailed", "UNVERIFIED", "VERIFIED", "audit_report"]

VERIFIED, UNVERIFIED = "verified", "unverified"
SHOWN = 6  # outcome-checked items named in an audit's line
AUDITS = (VERIFIED, UNVERIFIED)


class AuditFailed(ValueError):
    """A report whose stated verdict does not follow from its records: the message names the item and the field."""


@dataclass(frozen=True)
class Audit:
    status: str  # verified or unverified
    reason: str = ""


def audit_report(folder: Path, report: dict) -> Audit:
    """Re-derive what identity.json states; AuditFailed at the first thing that does not follow. The audit's reason
    names the passing items whose verdict the report keeps no evidence to re-derive (checked by outcome only)."""
    try:
        return _audit(folder, report)
    except AuditFailed:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        # a sealed report whose fields are of shapes no run writes (its seal hash made to match): named, never a
        # traceback, never believed
        raise AuditFailed(f"its fields are not what a run writes ({type(exc).__name__}: {exc}); its verdict cannot "
                          "be re-derived") from None


def _audit(folder: Path, report: dict) -> Audit:
    try:
        sealed = verify_seal(folder, report)
    except InputFileError as exc:
        raise AuditFailed(f"seal: {exc}") from None
    if not sealed.sealed:
        return Audit(UNVERIFIED, sealed.reason)
    judged = sealed.seal.get("judged_under") or {}
    if not isinstance(judged, dict) or not isinstance(judged.get("checks") or {}, dict):
        raise AuditFailed("seal: field judged_under is not the options a run is judged under")
    derived: set[str] = set()
    problem = (stated_items(report, judged) or evidence_items(report, judged, derived)
               or logits_items(report, judged, derived) or canary_answers(report, judged))
    if report.get("mode") != "gate":
        problem = problem or canary_items(report, judged, None, derived)  # as the run judged: against no reference
    if problem:
        raise AuditFailed(f"its stated verdict does not follow: {problem}")
    if report.get("mode") != "gate":
        return Audit(VERIFIED, "nothing to gate against: the items follow from what the run recorded"
                     + _outcome_only(report, derived))
    reference, why = _reference(sealed.seal.get("reference"))
    if reference is None:
        return Audit(UNVERIFIED, why)
    problem = _prompts(folder, report, reference, judged, derived) or canary_items(report, judged, reference,
                                                                                   derived)
    if problem:
        raise AuditFailed(f"its stated verdict does not follow from its records: {problem}")
    return Audit(VERIFIED, f"re-derived against {reference.path}" + _outcome_only(report, derived))


def _outcome_only(report: dict, derived: set[str]) -> str:
    """'; checked by outcome only (...): speculation, boot[2]': the passing items no rule re-derived."""
    rest = [str(c.get("id")) for c in report.get("checks") or [] if isinstance(c, dict)
            and c.get("outcome") == "passed" and str(c.get("id")) not in derived]
    if not rest:
        return ""
    more = f" and {len(rest) - SHOWN} more" if len(rest) > SHOWN else ""
    return ("; checked by outcome only (the report keeps no evidence to re-derive their verdicts from): "
            + ", ".join(rest[:SHOWN]) + more)


def _reference(sealed: dict | None) -> tuple[Reference | None, str]:
    """The reference the seal names, loaded and verified, when it is at hand and is the one gated against."""
    if not isinstance(sealed, dict) or not sealed.get("manifest_sha256"):
        return None, "the report names no reference to re-derive its verdicts against"
    tried = []
    for where in dict.fromkeys(p for p in (sealed.get("resolved"), sealed.get("path")) if isinstance(p, str)):
        path = Path(where)
        if not (path / "manifest.json").is_file():
            tried.append(f"{where}: not there")
            continue
        try:
            reference = load_reference(path)
        except InputFileError as exc:
            tried.append(str(exc))
            continue
        if manifest_digest(reference.manifest) != sealed["manifest_sha256"]:
            tried.append(f"{where}: another reference than the one gated against (manifest sha256 "
                         f"{manifest_digest(reference.manifest)[:12]}…, sealed {sealed['manifest_sha256'][:12]}…)")
            continue
        return reference, ""
    return None, "its reference is not at hand (" + "; ".join(tried or ["no path"]) + ")"


def _prompts(folder: Path, report: dict, reference: Reference, judged: dict, derived: set[str]) -> str | None:
    """Each `tokens[ID]` item's verdict and first divergence, from its record against the reference's."""
    finished = (report.get("records") or {}).get("finished") or {}
    envelope = NoiseEnvelope.from_json(reference.block("noise")) if reference.block("noise") else None
    for row in report.get("checks") or []:
        if not isinstance(row, dict) or row.get("kind") != "tokens" or "[" not in str(row.get("id")):
            continue
        cid = row["id"]
        pid = cid[cid.index("[") + 1:-1]
        meta = finished.get(str(RecordKey(pid, PRIMARY)))
        if meta is None:
            if row.get("verdict") != NOT_RUN:
                return f"{cid}: field verdict is {row.get('verdict')!r}, but the report holds no record of it"
            continue
        if pid not in reference.case_ids:
            return f"{cid}: the reference {reference.path} holds no case {pid!r}"
        try:
            rec = load_record(folder / (meta.get("folder") or "records"), PRIMARY, pid)
        except InputFileError as exc:
            return f"{cid}: its record cannot be read ({exc})"
        judged_again = judge_prompt(pid, reference.record(pid), rec,
                                    near_tie_nats=float(judged.get("near_tie_nats", 0.5)),
                                    sampled=bool(judged.get("sampled")), envelope=envelope,
                                    distribution=judged.get("sampling_check") == "distribution", decode=None,
                                    logprobs=judged.get("compare") == "logprobs")
        if row.get("verdict") != judged_again.verdict:
            return (f"{cid}: field verdict is {row.get('verdict')!r}, but its record against the reference gives "
                    f"{judged_again.verdict!r} ({judged_again.detail})")
        stated = (row.get("evidence") or {}).get("first_divergence")
        found = judged_again.evidence.get("first_divergence")
        if "first_divergence" in (row.get("evidence") or {}) and stated != found:
            return (f"{cid}: field evidence.first_divergence is {stated!r}, but its record against the reference "
                    f"gives {found!r}")
        derived.add(cid)
    return None
