"""The gate's plan: what this run is (record, gate or run; tokens, logits, floor), settled from the options, the
suite and the reference before any server is touched. Frozen: the collector and every worker read the same plan.

    plan = GatePlan.open(options)   # loads the suite and the reference (hash-verified)
    plan.mode, plan.prompt_ids, plan.logits_gate
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from oracle.backends import family_of, parse_backend
from oracle.checks import CHECKS, fresh_states
from oracle.compare.noise import NoiseEnvelope
from oracle.compare.tokens import SAMPLED_SPLIT
from oracle.gate.folders import check_run_folders
from oracle.gate.declarations import DEFAULT_TOP_K, F16_GATE_TOP_K, REFERENCE_TOP_K
from oracle.gate.options import GateOptions
from oracle.report.state import ReportState
from oracle.run.sampling import Sampling, settings_refusal
from oracle.run.suite import Suite, SuiteError, load_suite
from oracle.store.folders import fresh_report_dir
from oracle.store.json_files import InputFileError
from oracle.store.reference import Reference, check_blocks, check_record_target, load_reference, manifest_digest

__all__ = ["GatePlan"]


@dataclass(frozen=True)
class GatePlan:
    options: GateOptions  # with --logprobs resolved
    suite: Suite
    reference: Reference | None
    mode: str  # "gate" (against a reference), "record" or "run"
    f16_gate: bool  # gated on logits (KLD, Same top p), not on token identity
    logits_gate: bool  # logits compared (an f16 reference, or --logits)
    floor_wanted: bool  # record the reference's precision floor (f16, --floor-dtype, the family can reload)
    distribution_gate: bool = False  # --sampling-check distribution against a reference: sampled tokens may differ

    @classmethod
    def open(cls, options: GateOptions) -> "GatePlan":
        """Load the suite and the reference; UsageError naming the fix for anything that cannot run."""
        try:
            suite = load_suite(options.suite).with_max_tokens(options.max_tokens)
        except SuiteError as exc:
            raise pytest.UsageError(str(exc)) from None
        try:
            reference = load_reference(options.reference) if options.reference else None
            if reference is not None:  # each check kind's block, against the shape its kind declares
                check_blocks(reference, {k: shape for c in CHECKS for k, shape in c.blocks.items()})
            if options.record:
                check_record_target(options.record, overwrite=options.record_overwrite)
        except InputFileError as exc:  # a ReferenceError too
            raise pytest.UsageError(str(exc)) from None
        mode = "gate" if reference else "record" if options.record else "run"
        options = cls._resolved(options, reference)
        f16_gate = reference is not None and reference.kind == "f16"
        suite = cls._sampled(options, suite, reference, f16_gate)
        logits_gate = reference is not None and (f16_gate or options.logits)
        family = family_of(options.backend)
        floor = (mode == "record" and options.reference_kind == "f16" and family.capabilities.precision_floor
                 and options.floor_dtype not in ("none", options.dtype))
        if options.workers > 1 and (logits_gate or floor or family.in_process or options.logits):
            raise pytest.UsageError(f"-n {options.workers}: logits against an f16 reference, --logits (and its "
                                    "decode vs prefill), the hf backend and its "
                                    "precision floor run on one server only (their statistics need every prompt "
                                    "in one place); run them without -n")
        if options.logprobs is None and options.sampling is not None:
            # Sampled records are compared by their ids alone (no near-ties), and llama-server streams top-k under
            # top_k 0 at ~0.3 s a token (the whole vocabulary each step): none asked for unless --logprobs says.
            options = dataclasses.replace(options, logprobs=0)
        if options.logprobs is None:
            top_k = (REFERENCE_TOP_K if mode == "record" and options.reference_kind == "f16"
                     else F16_GATE_TOP_K if logits_gate else DEFAULT_TOP_K)
            options = dataclasses.replace(options, logprobs=top_k)
        return cls(options, suite, reference, mode, f16_gate, logits_gate, floor,
                   distribution_gate=mode == "gate" and options.sampling_check == "distribution")

    @staticmethod
    def _resolved(options: GateOptions, reference: Reference | None) -> GateOptions:
        """Each check's settings settled against the loaded reference (`CheckDescriptor.resolve`), before any
        server starts."""
        settled = {c.name: c.resolve(options.check(c.name), reference) for c in CHECKS if c.resolve is not None}
        if not settled:
            return options
        return dataclasses.replace(options, checks=tuple((dict(options.checks) | settled).items()))

    @staticmethod
    def _sampled(options: GateOptions, suite: Suite, reference: Reference | None, f16_gate: bool) -> Suite:
        """A sampled run's suite (one prompt per seed); a gate whose sampling differs from its reference's is
        refused, naming both settings (run/sampling.py)."""
        if reference is not None:
            _same_length(options, reference)
            recorded = Sampling.from_json((reference.manifest.get("run") or {}).get("sampling"))
            refusal = settings_refusal(recorded, options.sampling)
            if refusal:
                raise pytest.UsageError(f"--reference {reference.path}: {refusal}")
        if options.sampling is None:
            return suite
        if f16_gate:
            raise pytest.UsageError("--temperature against an f16 reference: an f16 reference is gated on logits "
                                    "along its greedy path; gate a sampled run against a sampled reference")
        return options.sampling.expand(suite)

    @property
    def family(self) -> str:
        return parse_backend(self.options.backend).family
    @property
    def platform(self) -> str:
        return parse_backend(self.options.backend).platform

    @property
    def capabilities(self):
        """What the family's backend declares it can do (oracle.backends.base.Capabilities)."""
        return family_of(self.options.backend).capabilities

    @property
    def in_process(self) -> bool:
        return family_of(self.options.backend).in_process

    @property
    def envelope(self) -> NoiseEnvelope | None:
        """The reference's own variability, when it measured any."""
        return NoiseEnvelope.from_json(self.reference.block("noise")) if self.reference else None

    def report_dir(self, given: Path | None = None) -> Path:
        """--report-dir, else a fresh reports/<UTC time>-<backend>/."""
        return given or self.options.report_dir or fresh_report_dir(self.options.backend)

    def check_folders(self, report_dir: Path) -> None:
        """Before anything is written: the report folder and --record apart from every path read and from each
        other, and no earlier report written over (a usage error naming both)."""
        check_run_folders(self.options, report_dir, default=self.options.report_dir is None)

    def new_state(self) -> ReportState:
        """The report as it starts: mode, suite, reference."""
        suite = self.suite
        state = ReportState(mode=self.mode, backend=self.options.backend, prompt_ids=suite.ids(), states=fresh_states())
        state.suite = {"name": suite.name, "path": suite.path, "sha256": suite.sha256, "prompts": len(suite.prompts)}
        if self.options.sampling is not None:
            state.apply({"sampling": {"settings": self.options.sampling.as_json(),
                                      "check": self.options.sampling_check, "near_ties": SAMPLED_SPLIT}})
        state.sealing = {"reference": self._sealed_reference(), "judged_under": self.judged_under()}
        if self.reference:
            # The manifest's sha256 names the reference wherever it was copied to: one config across machines.
            state.reference = {"path": str(self.reference.path), "kind": self.reference.kind,
                               "created_utc": self.reference.manifest.get("created_utc"),
                               "manifest_sha256": manifest_digest(self.reference.manifest)}
            envelope = self.envelope
            if envelope:
                state.reference["determinism"] = envelope.determinism
            for note in self.reference.notes:
                state.note(note)
            for check in CHECKS:  # what a check's settings say of how they were settled against the reference
                for note in check.settings_notes(self.options.check(check.name)) if check.settings_notes else ():
                    state.note(note)
        return state

    def _sealed_reference(self) -> dict | None:
        """The reference as the report's seal names it: where it was and its manifest's hash."""
        if self.reference is None:
            return None
        return {"path": str(self.reference.path), "resolved": str(Path(self.reference.path).resolve()),
                "manifest_sha256": manifest_digest(self.reference.manifest)}

    def judged_under(self) -> dict:
        """The options each verdict of this run was judged under, as the ledger's audit reads them back."""
        o = self.options
        return {"near_tie_nats": o.near_tie_nats, "allow_near_ties": o.allow_near_ties,
                "allow_inconclusive": list(o.allow_inconclusive), "sampled": o.sampling is not None,
                "sampling_check": o.sampling_check, "compare": o.compare,
                "allow_logprobs_moved": o.allow_logprobs_moved,
                # each check kind's settings as plain JSON (the audit reads the speed bar, the canaries' strictness)
                "checks": {name: json.loads(json.dumps(dataclasses.asdict(s), default=str))
                           for name, s in o.checks if dataclasses.is_dataclass(s)}}


def _same_length(options: GateOptions, reference: Reference) -> None:
    """A gate generates as many tokens as its reference did: a completion cut at another --max-tokens differs
    from the reference's by its length alone, which is no regression. Refused before any request."""
    run = reference.manifest.get("run")
    if not isinstance(run, dict) or "max_tokens" not in run or run["max_tokens"] == options.max_tokens:
        return
    def said(value) -> str:
        return f"--max-tokens {value}" if value is not None else "the suite's own max_tokens (no --max-tokens)"
    fix = f"--max-tokens {run['max_tokens']}" if run["max_tokens"] is not None else "no --max-tokens"
    raise pytest.UsageError(f"--reference {reference.path}: the reference was recorded with {said(run['max_tokens'])} "
                            f"and this gate asks for {said(options.max_tokens)}: completions of other lengths "
                            f"cannot be compared token for token; gate with {fix}, or re-record the reference "
                            f"with {said(options.max_tokens)}")
