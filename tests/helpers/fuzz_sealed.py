"""Generated edits of a sealed report folder (#52), given to every `oracle` command that reads one: identity.json
edited in any key (its seal then names it), a record or log changed, removed or added, and a verdict edited with its
seal hash made to match (a careful forger: only re-deriving the verdicts from the records finds it).

    case = draw(sealed_report_cases()); found = check_sealed_report(case, folder)   # {} when every property held

The properties: `oracle diff`, `html`, `repro` and `ledger add` refuse it (2) naming what differs, `history --check`
and `history --audit` of a ledger that took the report before the edit flag it (1), no traceback, and no input
folder changed (the report, its reference).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from fuzz import (COMMAND_BAD_INPUT, Outcome, _set_in_list_or_dict, json_values, oracle_command, problems,
                  tree_digest)
from oracle.store.reference import load_reference, manifest_digest
from oracle.store.seal import SEAL_KEY, SELF_KEY, content_digest, seal_of

__all__ = ["SealedCase", "check_sealed_report", "sealed_planted", "sealed_report_cases"]

# Verdict fields a forger edits, each to a value the records do not give (planted: b divergent at 3, a and c exact).
FORGED = {("verdict",): "pass", ("summary", "exact"): [3, 3], ("checks", 1, "verdict"): "exact",
          ("checks", 1, "outcome"): "passed", ("checks", 0, "verdict"): "divergent",
          ("checks", 1, "evidence", "first_divergence"): 2, ("summary", "checks_passed"): [3, 3]}
KEYS = ("verdict", "mode", "summary", "checks", "prompts", "identity", "reference", "records", "notes",
        "started_utc", "complete", "closed", "interruption", "seal")


def sealed_planted(folder: Path) -> Path:
    """The planted gate report (tests/helpers/planted_report.py), completed as a run writes it and sealed against
    its reference: the ledger audits it clean."""
    from planted_report import planted_report

    report = planted_report(folder, splits={"b": 3})
    path = report / "identity.json"
    data = json.loads(path.read_text())
    for check in data["checks"]:
        if check["verdict"] == "near-tie":  # b's split: the reference's token is outside b's own top-k
            check["verdict"] = "divergent"
        check.update(detail="", lines=[], outcome="passed" if check["verdict"] == "exact" else "failed",
                     inconclusive_kind=None)
    ref = load_reference(folder / "ref")
    data.update(verdict="fail", started_utc="2026-12-07T01:00:00Z", complete=True, closed=True, interruption=None,
                records={"folder": "records", "finished": {f"{p}@boot1-c1": {"id": p, "completion_sha256": "x"}
                                                           for p in data["prompts"]}},
                summary={"exact": [2, 3], "near_tie": 0, "divergent": 1, "inconclusive": 0, "checks_passed": [2, 3]})
    sealed_ref = {"path": str(ref.path), "resolved": str(ref.path.resolve()),
                  "manifest_sha256": manifest_digest(ref.manifest)}
    data[SEAL_KEY] = seal_of(report, data, reference=sealed_ref,
                             judged_under={"near_tie_nats": 0.5, "allow_near_ties": False, "allow_inconclusive": []})
    path.write_text(json.dumps(data, indent=1))
    return report


@dataclass(frozen=True)
class SealedCase:
    kind: str  # edit (identity.json, the seal left as it was), file (a record or log), forged (resealed verdict)
    what: str
    apply: object  # Path (the report folder) -> None

    def __repr__(self) -> str:
        return f"SealedCase({self.kind}: {self.what})"


@st.composite
def sealed_report_cases(draw) -> SealedCase:
    kind = draw(st.sampled_from(["edit", "file", "forged"]))
    if kind == "file":
        how = draw(st.sampled_from(["npz-bytes", "json-record", "removed", "added", "md"]))

        def apply_file(report: Path) -> None:
            first = sorted((report / "records").rglob("*.npz"))[0]
            if how == "npz-bytes":
                first.write_bytes(first.read_bytes() + b"\0")
            elif how == "json-record":
                rec = first.with_suffix(".json")
                rec.write_text(rec.read_text().replace('"length"', '"stop"'))
            elif how == "removed":
                first.unlink()
            elif how == "added":
                (first.parent / "z.json").write_text("{}")
            else:
                (report / "identity.md").write_text("# pass\n")

        return SealedCase(kind, how, apply_file)
    if kind == "forged":
        path = draw(st.sampled_from(sorted(FORGED, key=str)))
        value = FORGED[path]
    else:
        path = (draw(st.sampled_from(KEYS)),)
        value = draw(json_values())

    def apply(report: Path) -> None:
        p = report / "identity.json"
        data = json.loads(p.read_text())
        if kind == "edit" and data.get(path[0]) == value:
            value2 = [value]  # an edit always changes something
        else:
            value2 = value
        _set_in_list_or_dict(data, path, value2)
        if kind == "forged":
            data[SEAL_KEY][SELF_KEY] = content_digest(data)
        p.write_text(json.dumps(data))

    return SealedCase(kind, f"identity.json {'.'.join(map(str, path))} = {value!r}", apply)


def check_sealed_report(case: SealedCase, folder: Path) -> dict[str, list[str]]:
    """The sealed planted report added to a ledger, then edited: every reader refuses or flags it."""
    report = sealed_planted(folder)
    ledger = folder / "ledger.sqlite"
    added = oracle_command("ledger", "add", str(report), "--ledger", str(ledger))
    found = {"sealed report": problems(added, expected={0})}
    if "unverified" in added.output:
        found["sealed report"].append(f"added as unverified: {added.output[-300:]}")
    case.apply(report)
    before = tree_digest(folder / "ref") | {f"report/{k}": v for k, v in tree_digest(report).items()}

    def after() -> dict:
        return tree_digest(folder / "ref") | {f"report/{k}": v for k, v in tree_digest(report).items()}

    bad = {COMMAND_BAD_INPUT}
    found["diff"] = problems(oracle_command("diff", str(report), str(folder / "ref")), expected=bad)
    found["html"] = problems(oracle_command("html", str(report)), expected=bad)
    found["repro"] = problems(oracle_command("repro", str(report), "--out", str(folder / "repro")), expected=bad)
    found["ledger add"] = problems(oracle_command("ledger", "add", str(report), "--ledger",
                                                  str(folder / "other.sqlite")), expected=bad)
    found["history --check"] = problems(oracle_command("history", "--check", "--ledger", str(ledger)),
                                        expected={1})
    found["history --audit"] = problems(oracle_command("history", "--audit", "--ledger", str(ledger)),
                                        expected={1})
    found["folders"] = problems(Outcome(0, ""), expected={0}, before=before, after=after())
    return {k: v for k, v in found.items() if v}
