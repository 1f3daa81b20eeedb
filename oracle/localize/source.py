"""What `oracle localize` compares, read from a gate report: the two configurations (the reference's, from its
manifest, and the candidate's, from the report) and the path to feed both (the reference's prompt and its
completion up to the split).

    source = read_source(Path("reports/...-gate"), prompt=None, reference=None)
    source.reference, source.candidate, source.path_ids, source.split

Every refusal is a `LocalizeInput` whose message names the fix (the command exits 2).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

from oracle.backends import FAMILIES, family_of, parse_backend
from oracle.repro.source import diverged_prompts, resolve_reference
from oracle.store.json_files import InputFileError, read_json
from oracle.store.records import PRIMARY, load_record
from oracle.store.reference import ReferenceError, load_reference
from oracle.store.shapes import REPORT_FIX, ReportShape

__all__ = ["EVAL_CALLBACK", "Configuration", "LocalizeInput", "LocalizeSource", "configuration_of", "http_refusal",
           "read_source"]

EVAL_CALLBACK = "eval-callback"  # the descriptor's `layers` for a family read through llama.cpp's tool
GATE_HINT = "pytest --backend=hf-cpu --dtype float16 --reference REF --report-dir DIR"


class LocalizeInput(ValueError):
    """A report, prompt or reference oracle localize cannot use; the message names the fix."""


@dataclass(frozen=True)
class Configuration:
    """One side of the comparison, as the gate loaded it."""

    backend: str  # as given to --backend: hf-cpu, openvino-cpu, python:MODULE:FACTORY
    family: str
    model: str | None
    dtype: str = "float32"  # hf
    ov_config: tuple[tuple[str, str], ...] = ()  # openvino
    runner_args: tuple[tuple[str, str], ...] = ()  # python
    server_args: str = ""  # llamacpp: the embedded llama-server's --server-args (the launch flags)

    def load_settings(self) -> dict:
        """Its family's load keywords, from the fields its identity recorded: those its backend's constructor takes
        (a report keeps every family's fields; another family's never reach this backend)."""
        recorded = {"dtype": self.dtype, "ov_config": dict(self.ov_config) or None, "runner_args": self.runner_args}
        takes = inspect.signature(family_of(self.backend).backend).parameters
        return {key: value for key, value in recorded.items() if key in takes}

    def label(self) -> str:
        words = [self.backend]
        words += [self.dtype] if "dtype" in self.load_settings() else []
        words += [f"{k}={v}" for k, v in self.ov_config + self.runner_args]
        if self.layers == EVAL_CALLBACK:
            words.append(f"[{self.server_args}]" if self.server_args else "[no flags]")
        return " ".join(words)

    @property
    def layers(self) -> str:
        """How the family shows its layers (its descriptor's `layers`)."""
        return family_of(self.backend).layers

    def as_json(self) -> dict:
        return {"backend": self.backend, "family": self.family, "layers": self.layers, "model": self.model,
                "dtype": self.dtype, "ov_config": dict(self.ov_config), "runner_args": dict(self.runner_args),
                "server_args": self.server_args or None, "label": self.label()}


@dataclass(frozen=True)
class LocalizeSource:
    report_dir: Path
    reference_dir: Path
    reference: Configuration
    candidate: Configuration
    prompt: str
    split: int  # the first completion position where the candidate's token differs
    path_ids: tuple[int, ...]  # the prompt's ids and the reference's completion before the split
    reference_token: int | None  # the reference's token at the split
    candidate_token: int | None


def http_refusal(backend: str, where: str, *, launched: bool = False) -> str:
    """The words for a family that shows no layers: which in-process family to localize with, and how."""
    article = "an" if backend[:1] in "aeiou" else "a"
    embedded = (". A llamacpp run shows its tensors through llama.cpp's llama-eval-callback only when oracle "
                "launched the embedded llama-server (--oracle-model GGUF --server-args FLAGS), whose model and flags "
                "the report names: gate that way and localize its report") if launched else ""
    return (f"{where}: {article} {backend} run talks to a server over HTTP, which shows no layers. Localize with an "
            f"in-process family ({', '.join(d.name for d in FAMILIES.values() if d.in_process)}) that loads the "
            "same weights in the two "
            "configurations: record the reference with e.g. `pytest --backend=hf-cpu --oracle-model MODEL --dtype float32 "
            "--record REF --reference-kind f16`, gate the candidate with `pytest --backend=hf-cpu --oracle-model MODEL "
            f"--dtype float16 --reference REF --report-dir DIR`, then run `oracle localize DIR`{embedded}")


def configuration_of(identity: dict, where: str) -> Configuration:
    """The configuration a run's identity (identity.json's, or a reference manifest's) describes."""
    backend = identity.get("backend") or ""
    try:
        descriptor = family_of(backend)
    except (KeyError, ValueError) as exc:
        raise LocalizeInput(f"{where}: its backend {backend!r} is not one oracle knows ({exc})") from None
    family = parse_backend(backend).family
    if not descriptor.in_process and not (descriptor.layers and identity.get("target") == "embedded"):
        raise LocalizeInput(http_refusal(backend, where, launched=bool(descriptor.layers)))
    server = identity.get("server") or {}
    model = (identity.get("model") or {}).get("path") or server.get("model_path")
    return Configuration(backend=backend, family=family, model=model if descriptor.locator is None else None,
                         dtype=str(server.get("dtype") or "float32"),
                         ov_config=tuple(sorted((str(k), str(v)) for k, v in (server.get("ov_config") or {}).items())),
                         runner_args=tuple((str(k), str(v)) for k, v in (server.get("runner_args") or {}).items()),
                         server_args=str(identity.get("server_args") or "") if descriptor.layers == EVAL_CALLBACK
                         else "")


def _report(report_dir: Path) -> dict:
    path = report_dir / "identity.json"
    if not report_dir.is_dir():
        raise LocalizeInput(f"{report_dir}: no such folder; give the report folder a gate run wrote ({GATE_HINT})")
    if not path.is_file():
        raise LocalizeInput(f"{report_dir}: no identity.json there; give the report folder a gate run wrote "
                            f"({GATE_HINT})")
    try:
        report = read_json(path, ReportShape, fix=REPORT_FIX)
    except InputFileError as exc:
        raise LocalizeInput(str(exc)) from None
    if report.get("mode") != "gate":
        raise LocalizeInput(f"{report_dir}: a {report.get('mode') or 'non-gate'} report; oracle localize needs a "
                            f"gate report, one run against a reference ({GATE_HINT})")
    return report


def _prompt(report_dir: Path, report: dict, prompt: str | None) -> str:
    diverged = diverged_prompts(report)
    if prompt is not None:
        if prompt not in diverged:
            raise LocalizeInput(f"--prompt {prompt}: it did not split from the reference in this run; give one that "
                                f"did: {', '.join(diverged) or '(none)'}")
        return prompt
    if not diverged:
        raise LocalizeInput(f"{report_dir}: no prompt split from the reference in this gate run; there is no split "
                            "to localize (give the report of a run whose tokens[ID] checks failed)")
    return diverged[0]


def read_source(report_dir: Path, *, prompt: str | None = None, reference: Path | None = None) -> LocalizeSource:
    report_dir = Path(report_dir)
    report = _report(report_dir)
    identity = report.get("identity") or {}
    identity = identity if identity.get("backend") else {**identity, "backend": report.get("backend") or ""}
    candidate = configuration_of(identity, str(report_dir))
    target = _prompt(report_dir, report, prompt)
    try:
        ref_dir = resolve_reference(report_dir, report, reference)
    except ValueError as exc:  # repro's words name --reference DIR, the same option here
        raise LocalizeInput(str(exc)) from None
    try:
        manifest = load_reference(ref_dir).manifest
        record = load_record(ref_dir / "records", PRIMARY, target)
    except (ReferenceError, InputFileError) as exc:
        raise LocalizeInput(f"--reference {ref_dir}: {exc}") from None
    except OSError:
        raise LocalizeInput(f"--reference {ref_dir}: no record of prompt {target!r}; give the reference this "
                            "report was gated against with --reference DIR") from None
    ref_config = configuration_of(manifest.get("identity") or {}, f"--reference {ref_dir}")
    check = next(c for c in report["checks"] if c.get("id") == f"tokens[{target}]")
    evidence = check.get("evidence") or {}
    split = evidence.get("first_divergence")
    if not isinstance(split, int) or split < 0:
        raise LocalizeInput(f"{report_dir}: the tokens[{target}] check names no split position; give a gate report "
                            "whose check says where the tokens split")
    ref_ids = list(record.completion_ids)
    return LocalizeSource(
        report_dir=report_dir, reference_dir=ref_dir, reference=ref_config, candidate=candidate, prompt=target,
        split=split, path_ids=tuple(record.prompt_ids) + tuple(ref_ids[:split]),
        reference_token=ref_ids[split] if split < len(ref_ids) else None,
        candidate_token=evidence.get("candidate_token"))
