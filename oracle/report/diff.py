"""`oracle diff A B`: two report dirs, or a report dir and a reference, compared output by output.

Per prompt: token-array hash equal or not and the first divergence; verdict changes;
canary changes; identity changes (build, environment variable, package, model hash); the speed change
(B against A, paired per prompt, when both ran on the same hardware and hold token times; else "not
comparable" with the reason). Reports of every schema are read; one without a speed card is "not comparable".
Exit code 0 when every output is identical (identity differences are still listed),
1 when any output differs, 2 on bad input.

    result = diff_runs(Path("reports/a"), Path("references/qwen-int4-mtp0"))
    result.outputs_identical, result.as_json()
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from oracle.compare.tokens import first_divergence
from oracle.speed.card import reference_card
from oracle.speed.launch_match import launch_match
from oracle.speed.report import speed_words
from oracle.speed.validity import NOT_COMPARABLE
from oracle.speed.versus import compare_cards, hardware
from oracle.store.json_files import InputFileError, read_json
from oracle.store.records import PRIMARY, RECORD_FIX, RecordKey, load_record
from oracle.store.reference import Reference, ReferenceError, load_reference
from oracle.store.seal import verify_seal
from oracle.store.shapes import REPORT_FIX, RecordShape, ReportShape

__all__ = ["DiffError", "RunSide", "diff_runs", "identity_changes", "load_side", "speed_change"]

# Identity fields that differ between any two runs of one configuration.
# Instance fields: where and when a run happened, not what was run (servers: which worker had which URL), and the
# run's own plan (its estimates and timings, `plan.`).
_VOLATILE = ("url", "boots.", "host.hostname", "server.model_path", "environment.ORACLE_CACHE_DIR", "servers",
             "plan.")


class DiffError(InputFileError):
    """Bad input: the message names the path and what was expected there."""


@dataclass
class RunSide:
    path: Path
    kind: str  # "report" or "reference"
    hashes: dict[str, str]  # prompt id -> completion sha256 (primary run)
    finish: dict[str, str]
    verdicts: dict[str, str] = field(default_factory=dict)
    canaries: dict[str, str] = field(default_factory=dict)
    identity: dict = field(default_factory=dict)
    folders: dict[str, str] = field(default_factory=dict)  # prompt id -> records folder (several servers)
    speed: dict | None = None  # the speed card (a report's; a reference's is rebuilt from its records)
    no_speed: str | None = None  # why there is no card

    def tokens(self, pid: str) -> list[int]:
        return load_record(self.path / self.folders.get(pid, "records"), PRIMARY, pid).completion_ids


def load_side(path: Path) -> RunSide:
    """A reference (verified: every file against its manifest, every record read) or a report (identity.json
    checked against its shape); DiffError or InputFileError, naming the file and the fix, for anything else."""
    if (path / "manifest.json").is_file():
        try:
            reference = load_reference(path)
        except ReferenceError as exc:
            raise DiffError(str(exc).removeprefix("--reference ")) from None
        m = reference.manifest
        cases = m["cases"]
        card, why = _reference_card(reference, list(cases))
        return RunSide(path, "reference", {k: v["completion_sha256"] for k, v in cases.items()},
                       {k: v.get("finish_reason") for k, v in cases.items()},
                       canaries={k: _canary(v) for k, v in (m.get("canaries") or {}).items()},
                       identity=m.get("identity") or {}, speed=card, no_speed=why)
    if (path / "identity.json").is_file():
        rep = read_json(path / "identity.json", ReportShape, fix=REPORT_FIX)
        verify_seal(path, rep)  # a SealError naming the file that differs: nothing edited is compared
        hashes, finish, folders = {}, {}, {}
        # identity.json lists every finished record's hashes; the records folder (if kept) gives the tokens.
        finished = ((rep.get("records") or {}).get("finished") or {}).items()
        metas = [m for k, m in finished if (key := RecordKey.parse(k)).condition == PRIMARY and key.server is None]
        if not metas:
            metas = [read_json(m, RecordShape, fix=RECORD_FIX)
                     for m in sorted((path / "records" / PRIMARY.key).glob("*.json"))]
        for row in metas:
            if row.get("repeat", 0) == 0:
                hashes[row["id"]], finish[row["id"]] = row["completion_sha256"], row.get("finish_reason")
                if row.get("folder"):  # a merged report: the records are in the server's own folder
                    folders[row["id"]] = row["folder"]
        return RunSide(path, "report", hashes, finish,
                       verdicts={c["id"]: c["verdict"] for c in rep.get("checks", [])},
                       canaries={k: _canary(v) for k, v in (rep.get("canaries") or {}).items()},
                       identity=rep.get("identity") or {}, folders=folders, speed=rep.get("speed"),
                       no_speed=None if rep.get("speed") else
                       f"{path} has no speed card (report schema {rep.get('schema_version', 1)}, or no primary run)")
    raise DiffError(f"{path}: neither a report dir (identity.json) nor a reference (manifest.json); "
                    "give a folder written by `pytest --backend=...` or `--record`")


def _reference_card(reference: Reference, prompt_ids: list[str]) -> tuple[dict | None, str | None]:
    try:
        return reference_card(reference, prompt_ids)
    except (InputFileError, OSError) as exc:
        return None, f"{reference.path}: its token times cannot be read ({exc})"


def speed_change(a: RunSide, b: RunSide) -> dict:
    """B's speed against A's: the paired speed-up with its interval, or not comparable and why."""
    missing = a.no_speed if a.speed is None else b.no_speed if b.speed is None else None
    if missing:
        return {"label": NOT_COMPARABLE, "reasons": [missing], "median": None, "ci95": None}
    return compare_cards(b.speed, a.speed, candidate_hw=hardware(b.identity), reference_hw=hardware(a.identity),
                         launch=launch_match(b.identity.get("launch_command"), a.identity.get("launch_command")))


def speed_change_words(change: dict) -> str:
    launch = f"; launch: {change['launch']}" if change.get("launch") else ""
    if change.get("median") is None or change["label"] == NOT_COMPARABLE:
        return (f"{change['label']} ({'; '.join(change.get('reasons') or []) or 'no prompt timed on both sides'})"
                + launch)
    return speed_words(change) + launch


def _canary(row: dict) -> str:
    return row.get("verdict") or ("pass" if row.get("ok") else "wrong")


def _flatten(d, prefix: str = "") -> dict[str, str]:
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}{k}."))
    else:
        out[prefix[:-1]] = json.dumps(d, sort_keys=True) if isinstance(d, (list, tuple)) else str(d)
    return out


@dataclass
class DiffResult:
    a: RunSide
    b: RunSide
    prompts: list[dict]
    verdict_changes: list[dict]
    canary_changes: list[dict]
    identity_changes: list[dict]
    speed: dict = field(default_factory=dict)  # B against A

    @property
    def outputs_identical(self) -> bool:
        return all(p["status"] == "identical" for p in self.prompts)

    def as_json(self) -> dict:
        return {"a": str(self.a.path), "b": str(self.b.path), "outputs_identical": self.outputs_identical,
                "prompts": self.prompts, "verdict_changes": self.verdict_changes,
                "canary_changes": self.canary_changes, "identity_changes": self.identity_changes,
                "speed": self.speed}

    def table(self) -> str:
        same = sum(p["status"] == "identical" for p in self.prompts)
        lines = [f"A {self.a.kind}: {self.a.path}", f"B {self.b.kind}: {self.b.path}",
                 f"outputs: {same}/{len(self.prompts)} identical",
                 f"speed, B against A: {speed_change_words(self.speed)}", "",
                 f"{'prompt':28} {'status':12} first divergence"]
        for p in self.prompts:
            fd = "" if p["first_divergence"] is None else str(p["first_divergence"])
            lines.append(f"{p['prompt']:28} {p['status']:12} {fd}")
        for title, rows, fmt in (("verdict changes", self.verdict_changes, "{id}: {a} -> {b}"),
                                 ("canary changes", self.canary_changes, "{id}: {a} -> {b}"),
                                 ("identity changes", self.identity_changes, "{field}: {a} -> {b}")):
            if rows:
                lines += ["", f"{title}:"] + ["  " + fmt.format(**r) for r in rows]
        return "\n".join(lines)


def diff_runs(a_path: Path, b_path: Path) -> DiffResult:
    a, b = load_side(a_path), load_side(b_path)
    prompts = []
    for pid in sorted(set(a.hashes) | set(b.hashes)):
        if pid not in a.hashes or pid not in b.hashes:
            prompts.append({"prompt": pid, "status": "only in " + ("A" if pid in a.hashes else "B"),
                            "first_divergence": None})
            continue
        if a.hashes[pid] == b.hashes[pid]:
            status = "identical" if a.finish.get(pid) == b.finish.get(pid) else "finish differs"
            prompts.append({"prompt": pid, "status": status, "first_divergence": None})
            continue
        try:
            fd = first_divergence(a.tokens(pid), b.tokens(pid))
        except OSError:
            fd = None  # a side without its records folder: the hashes say "differs", not where
        prompts.append({"prompt": pid, "status": "differs", "first_divergence": fd})
    verdicts = [{"id": k, "a": a.verdicts[k], "b": b.verdicts[k]} for k in sorted(set(a.verdicts) & set(b.verdicts))
                if a.verdicts[k] != b.verdicts[k]]
    canaries = [{"id": k, "a": a.canaries.get(k, "absent"), "b": b.canaries.get(k, "absent")}
                for k in sorted(set(a.canaries) | set(b.canaries)) if a.canaries.get(k) != b.canaries.get(k)]
    return DiffResult(a, b, prompts, verdicts, canaries, identity_changes(a.identity, b.identity),
                      speed_change(a, b))


def identity_changes(a: dict, b: dict) -> list[dict]:
    """The identity fields (dotted: `packages.torch`, `environment.OMP_NUM_THREADS`) that differ from A to B,
    instance fields (where and when a run happened) left out: [{"field", "a", "b"}], "absent" for a missing side."""
    fa, fb = _flatten(a), _flatten(b)
    return [{"field": k, "a": fa.get(k, "absent"), "b": fb.get(k, "absent")}
            for k in sorted(set(fa) | set(fb))
            if fa.get(k) != fb.get(k) and not any(k == v or k.startswith(v) for v in _VOLATILE)]
