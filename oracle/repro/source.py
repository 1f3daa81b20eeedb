"""What `oracle repro` reproduces, read from a gate report folder: the run's identity, the candidate's launch
command, the reference it was gated against (its manifest and records) and the divergent prompt.

    source = read_source(Path("reports/2026-12-05T07-04-09Z-gate"), prompt=None, reference=None)
    source.target, source.split, source.context        # the prompt, where it split, the prompts sent before it

Every refusal is a `ReproInput` whose message names the fix (the command exits 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from oracle.backends import family_of
from oracle.compare.verdicts import EXACT
from oracle.ledger.audit import AuditFailed, audit_report
from oracle.redaction import MASK
from oracle.store.json_files import InputFileError, read_json
from oracle.store.records import PRIMARY, Record, load_record
from oracle.store.reference import ReferenceError, load_reference
from oracle.store.shapes import REPORT_FIX, ReportShape

__all__ = ["ReproInput", "ReproSource", "diverged_prompts", "read_source", "resolve_reference"]

GATE_HINT = "pytest --backend=... --reference REF --launch CMD --report-dir DIR"


class ReproInput(ValueError):
    """A folder, prompt or reference oracle repro cannot use; the message names the fix."""


@dataclass(frozen=True)
class ReproSource:
    report_dir: Path
    report: dict  # identity.json
    backend: str
    target_kind: str  # "launch" or "embedded": how the candidate is started again
    launch: str | None  # the candidate's command with {port} (None: the family's embedded server)
    model: str | None  # the embedded server's model (--oracle-model), when the gate started one
    server_args: str  # the embedded server's --server-args
    reference_dir: Path
    manifest: dict  # the reference's manifest.json
    order: tuple[str, ...]  # the prompts in the order the gate sent them (its primary run, one at a time)
    prompt_ids: dict[str, tuple[int, ...]]  # prompt id -> its token ids, as the reference recorded them
    target: str  # the prompt to reproduce
    expected: Record  # the reference's record of it
    gated: Record | None  # the gate's own record of it (None when the folder lacks it)
    check: dict  # the gate's tokens[target] check
    max_tokens: int
    seed: int
    logprobs: int

    @property
    def context(self) -> tuple[str, ...]:
        """The prompts the gate sent before the target on the same server."""
        return self.order[:self.order.index(self.target)]

    @property
    def split(self) -> int | None:
        return (self.check.get("evidence") or {}).get("first_divergence")

    @property
    def candidate_command(self) -> str:
        """The candidate's launch command as the report holds it (secrets redacted)."""
        return self.launch or self.identity.get("launch_command") or ""

    @property
    def reference_command(self) -> str | None:
        ident = self.manifest.get("identity") or {}
        return ident.get("launch_command") or (f"(a server at {ident['url']}, not started by oracle)"
                                               if ident.get("url") else None)

    @property
    def identity(self) -> dict:
        return self.report.get("identity") or {}


def diverged_prompts(report: dict) -> list[str]:
    """The prompts whose tokens[ID] check is not exact, in the report's prompt order."""
    verdicts = {c["id"][len("tokens["):-1]: c.get("verdict") for c in report.get("checks") or []
                if str(c.get("id", "")).startswith("tokens[")}
    return [p for p in report.get("prompts") or verdicts if verdicts.get(p, EXACT) != EXACT]


def read_source(report_dir: Path, *, prompt: str | None = None, reference: Path | None = None,
                launch: str | None = None) -> ReproSource:
    report = _report(report_dir)
    identity = report.get("identity") or {}
    backend = report.get("backend") or identity.get("backend") or ""
    try:
        in_process = family_of(backend).in_process
    except (KeyError, ValueError) as exc:
        raise ReproInput(f"{report_dir}: the report's backend {backend!r} is not one oracle knows ({exc})") from None
    if in_process:
        raise ReproInput(f"{report_dir}: a {backend} run loads the model in process; there is no server request to "
                         "replay as a curl command (oracle repro reproduces a server's divergence)")
    target = _target_prompt(report_dir, report, prompt)
    kind, command = _candidate(report_dir, identity, launch)
    ref_dir = resolve_reference(report_dir, report, reference)
    try:
        manifest = load_reference(ref_dir).manifest
    except ReferenceError as exc:
        raise ReproInput(f"{exc} (give a valid reference with --reference DIR)") from None
    order = tuple(report.get("prompts") or manifest.get("cases") or ())
    records = {}
    for pid in order:
        try:
            records[pid] = load_record(ref_dir / "records", PRIMARY, pid)
        except InputFileError as exc:
            raise ReproInput(f"--reference {ref_dir}: {exc}") from None
        except OSError:
            raise ReproInput(f"--reference {ref_dir}: no record of prompt {pid!r} in {PRIMARY.key}; give the "
                             "reference this report was gated against with --reference DIR") from None
    check = next(c for c in report["checks"] if c.get("id") == f"tokens[{target}]")
    run = manifest.get("run") or {}
    request = identity.get("request") or {}
    expected = records[target]
    return ReproSource(
        report_dir=report_dir, report=report, backend=backend, target_kind=kind, launch=command,
        model=(identity.get("model") or {}).get("path"), server_args=identity.get("server_args") or "",
        reference_dir=ref_dir, manifest=manifest, order=order,
        prompt_ids={p: tuple(r.prompt_ids) for p, r in records.items()}, target=target, expected=expected,
        gated=_gated_record(report_dir, target), check=check,
        max_tokens=int(run.get("max_tokens") or len(expected.completion_ids)),
        seed=next((int(s) for s in (request.get("seed"), run.get("seed")) if s is not None), 1234),
        logprobs=int(request.get("logprobs", 0) or 0))


def _report(report_dir: Path) -> dict:
    path = report_dir / "identity.json"
    if not path.is_file():
        raise ReproInput(f"{report_dir}: no identity.json there; give the report folder a gate run wrote "
                         f"({GATE_HINT})")
    try:
        report = read_json(path, ReportShape, fix=REPORT_FIX)
        audit_report(report_dir, report)  # the file or field that differs named before any server starts
    except InputFileError as exc:
        raise ReproInput(str(exc)) from None
    except AuditFailed as exc:
        raise ReproInput(f"{report_dir}: refused: {exc}") from None
    if report.get("mode") != "gate":
        mode = report.get("mode")
        raise ReproInput(f"{report_dir}: a {mode or 'non-gate'} report; oracle repro needs a gate report, one run "
                         f"against a reference ({GATE_HINT})")
    return report


def _target_prompt(report_dir: Path, report: dict, prompt: str | None) -> str:
    diverged = diverged_prompts(report)
    if prompt is not None:
        if prompt not in (report.get("prompts") or []):
            raise ReproInput(f"--prompt {prompt}: not a prompt of this run; give one of "
                             f"{', '.join(report.get('prompts') or []) or '(none)'}")
        if prompt not in diverged:
            raise ReproInput(f"--prompt {prompt}: it did not diverge in this run; give one that did: "
                             f"{', '.join(diverged) or '(none: nothing to reproduce)'}")
        return prompt
    if not diverged:
        exact = (report.get("summary") or {}).get("exact")
        counts = f" ({exact[0]}/{exact[1]} exact)" if isinstance(exact, list) and len(exact) == 2 else ""
        raise ReproInput(f"{report_dir}: no prompt diverged from the reference in this gate run{counts}; there is "
                         "nothing to reproduce (give the report of a run whose tokens[ID] checks failed)")
    return diverged[0]


def _candidate(report_dir: Path, identity: dict, launch: str | None) -> tuple[str, str | None]:
    """(how the candidate is started, its launch command or None for the embedded server)."""
    if launch:
        if "{port}" not in launch:
            raise ReproInput("--launch: put {port} where the server's port goes, so that oracle picks a free one")
        return "launch", launch
    kind = identity.get("target")
    if kind not in ("launch", "embedded"):
        raise ReproInput(f"{report_dir}: the candidate was a server oracle did not start ({kind or 'unknown'} "
                         "target, e.g. --oracle-url); give its launch command with --launch CMD (with {port})")
    held = identity.get("launch_command") if kind == "launch" else identity.get("server_args")
    if held and MASK in held:
        flag = "--launch CMD" if kind == "launch" else "--launch CMD (the embedded command with the secret)"
        raise ReproInput(f"{report_dir}: the report's launch command has a secret redacted ({MASK}); give the "
                         f"command again with {flag}")
    return kind, identity.get("launch_command") if kind == "launch" else None


def resolve_reference(report_dir: Path, report: dict, reference: Path | None) -> Path:
    """--reference, or the report's reference path as the gate was given it (relative to where the gate ran, or
    else to the report folder's parent)."""
    if reference is not None:
        if not (reference / "manifest.json").is_file():
            raise ReproInput(f"--reference {reference}: no manifest.json there; give the reference folder this "
                             "report was gated against")
        return reference
    named = (report.get("reference") or {}).get("path")
    if not named:
        raise ReproInput(f"{report_dir}: the report names no reference; give it with --reference DIR")
    for candidate in (Path(named), report_dir.parent / named, report_dir / named):
        if (candidate / "manifest.json").is_file():
            return candidate
    raise ReproInput(f"{report_dir}: its reference {named} is not found (from here or beside the report); give it "
                     "with --reference DIR")


def _gated_record(report_dir: Path, target: str) -> Record | None:
    """The gate's own record of the target: records/ of the report, or of the server that ran it (xdist)."""
    for folder in (report_dir / "records", *sorted(report_dir.glob("servers/*/records"))):
        if (folder / PRIMARY.key / f"{target}.npz").is_file():
            try:
                return load_record(folder, PRIMARY, target)
            except (OSError, InputFileError):  # the gate's own record is shown when it reads back; it is optional
                return None
    return None
