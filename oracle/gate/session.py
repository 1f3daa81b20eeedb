"""The gate session: one object holds a run from options to verdicts; the plugin only calls it.

    session = GateSession(options); session.start(); session.ensure_run()
    session.judge(session.token_check("code-palindrome")); session.finish()
"""

from __future__ import annotations

import dataclasses
import time
from importlib import metadata
from pathlib import Path

import pytest

from oracle.backends import Backend, RequestFailed, is_in_process, make_backend, make_in_process_backend, parse_backend
from oracle.backends.base import IDS_FROM_TEXT
from oracle.compare.tokens import TokenSide, compare_tokens
from oracle.compare.text import text_check
from oracle.compare.conditions import compare_condition, condition_check, first_split, required_exact
from oracle.run.gguf import GGUFError
from oracle.targets.embedded import EmbeddedError, default_model, embedded_target
from oracle.compare.sources import evidence_sources
from oracle.compare.evidence import cache_zero_check, speculation_check, speculation_summary
from oracle.run.ladder import ladder_condition, ladder_waves
from oracle.compare.noise import NoiseEnvelope, classify_determinism
from oracle.store.identity import accelerator_identity, filtered_environment, host_identity, model_sha256, package_versions
from oracle.logits.path import PromptLogits, compare_prompt, logits_check, logits_report, precision_floor, suite_check
from oracle.options import DEFAULT_TOP_K, F16_GATE_TOP_K, REFERENCE_TOP_K, GateOptions
from oracle.gate.progress import QuietProgress
from oracle.run.prompting import LocalTokenizer, RenderedPrompt, render_suite, render_text, template_sha256
from oracle.store.records import Condition, Record, save_record
from oracle.store.reference import Reference, ReferenceError, check_record_target, load_reference, write_reference
from oracle.report.writer import ReportState, write_report
from oracle.run.runner import RunInterrupted, RunResult, one_at_a_time, run_waves
from oracle.run.suite import SuiteError, load_suite
from oracle.gate.controller import merge_states, owned_records
from oracle.gate.placement import server_label
from oracle.targets.launched import LaunchError, LaunchedServer, redact_command
from oracle.compare.verdicts import DIVERGENT, EXACT, FAIL, INCONCLUSIVE, INFO, NOT_RUN, PASS, WITHIN_NOISE, Check, passed
from oracle.compare.splits import describe_split, split_view

__all__ = ["GateSession"]

PRIMARY = Condition()
_NO_SPLIT = 1 << 30  # sorts rows without a token split last


class GateSession:
    """role: "single" (no xdist), "worker" (one xdist worker and its server) or "controller" (merges)."""

    def __init__(self, options: GateOptions, *, worker: int = 0, role: str = "single",
                 report_dir: Path | None = None) -> None:
        self.options = options
        self.server_index = worker  # xdist worker gwN has server N ({worker} in --launch)
        self.role = role
        self.url = options.urls[worker] if options.urls else None
        self.owned: set[str] | None = None  # prompts this server runs at c1 (None: all of them)
        try:
            self.suite = load_suite(options.suite).with_max_tokens(options.max_tokens)
        except SuiteError as exc:
            raise pytest.UsageError(str(exc)) from None
        try:
            self.reference: Reference | None = load_reference(options.reference) if options.reference else None
            if options.record:
                check_record_target(options.record, overwrite=options.record_overwrite)
        except ReferenceError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.mode = "gate" if self.reference else "record" if options.record else "run"
        # An f16 reference is gated on its logits (KLD, Same top p), not on token identity; --logits adds
        # the same comparison against any reference that holds top-k logprobs.
        self.f16_gate = self.reference is not None and self.reference.kind == "f16"
        self.logits_gate = self.reference is not None and (self.f16_gate or options.logits)
        self.in_process = is_in_process(options.backend)
        self.floor_wanted = (self.mode == "record" and options.reference_kind == "f16" and self.in_process
                             and options.floor_dtype not in ("none", options.dtype))
        if options.workers > 1 and (self.logits_gate or self.floor_wanted or self.in_process):
            raise pytest.UsageError(f"-n {options.workers}: logits against an f16 reference, the hf backend and its "
                                    "precision floor run on one server only (their statistics need every prompt "
                                    "in one place); run them without -n")
        if options.logprobs is None:
            top_k = (REFERENCE_TOP_K if self.mode == "record" and options.reference_kind == "f16"
                     else F16_GATE_TOP_K if self.logits_gate else DEFAULT_TOP_K)
            self.options = options = dataclasses.replace(options, logprobs=top_k)
        spec = parse_backend(options.backend)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.report_dir = report_dir or options.report_dir or _fresh(Path("reports") / f"{stamp}-{options.backend}")
        self.state = ReportState(mode=self.mode, backend=options.backend, prompt_ids=self.suite.ids())
        self.state.suite = {"name": self.suite.name, "path": self.suite.path, "sha256": self.suite.sha256,
                            "prompts": len(self.suite.prompts)}
        if self.reference:
            self.state.reference = {"path": str(self.reference.path), "kind": self.reference.kind,
                                    "created_utc": self.reference.manifest.get("created_utc")}
        self.envelope = NoiseEnvelope.from_json(self.reference.noise) if self.reference else None
        if self.envelope:
            self.state.reference["determinism"] = self.envelope.determinism
        self.family, self.platform = spec.family, spec.platform
        self.server: LaunchedServer | None = None
        self.backend: Backend | None = None
        self.rendered: list[RenderedPrompt] = []
        self.records: dict[str, Record] = {}
        self.result: RunResult | None = None
        self._ran = False
        self._model_path: Path | None = None
        self._local_tokenizer: LocalTokenizer | None = None
        self._health_backends: dict[str, Backend] = {}
        self.condition_rows: dict[str, list[dict]] = {}  # condition key -> rows vs c1 (ladder levels, boots)
        self._reference_records: dict[str, Record] | None = None
        self.progress = QuietProgress()  # the plugin puts a terminal line here unless -q
        self._report_written = 0.0
        self._logits_done = False
        self.logit_rows: dict[str, PromptLogits] = {}
        self.logits_floor: dict | None = None  # record mode: the reference's own precision floor
        self.worker_payloads: dict[int, dict | None] = {}  # the controller's: what each worker sent
        self._baseline: RunResult | None = None  # a c1 run of other servers' prompts, not yet in a check

    def select(self, prompt_ids: set[str], owned: set[str] | None = None) -> None:
        """Keep only these prompts (the ones whose items are selected); an empty set keeps all.

        owned: the prompts this server runs at c1 (an xdist worker's share); ladder levels and boots on
        this server still send every kept prompt, after a c1 baseline of the others on the same server.
        """
        if prompt_ids:
            self.suite = self.suite.only(prompt_ids)
            self.state.prompt_ids = self.suite.ids()
            self.state.suite["selected"] = len(self.suite.prompts)
        self.owned = owned

    # -- start: target up, prompts rendered, checked against the reference --------------------
    def start(self) -> None:
        self.report_dir.mkdir(parents=True, exist_ok=True)
        write_report(self.report_dir, self.state)
        if self.in_process:
            self._load_in_process()
        else:
            self._reach_server()
        try:
            self._render()
            # The command as launched, with {port} left as written (a port says nothing about the configuration).
            self.state.identity = self._identity(self.server.configured_command if self.server else None)
            if self.state.identity["server"].get("prefix_caching") == "True":
                self.state.notes.append("the server runs with prefix caching on: each request's own cache_salt "
                                        "keeps it from hitting another's blocks, and cache-zero checks that; for "
                                        "gating, start vLLM with --no-enable-prefix-caching")
        except (RequestFailed, EmbeddedError) as exc:
            raise pytest.UsageError(f"could not read the server's template or tokenizer: {exc}") from None
        self._check_prompt_tokens()
        write_report(self.report_dir, self.state)

    def _reach_server(self) -> None:
        """--url, --launch or the embedded default: the server is up and healthy, its backend and route known."""
        o = self.options
        if self.url:
            url = self.url
        else:
            env = None
            if o.launch:
                command = o.launch
            else:
                command, env = self._embedded_command()
            self.server = LaunchedServer(command, log_dir=self.report_dir, env=env, worker=str(self.server_index))
            try:
                self.server.start(self._healthy)
            except LaunchError as exc:
                raise pytest.UsageError(f"oracle could not start the target: {exc}") from None
            url = self.server.url
        self.backend = make_backend(o.backend, url, timeout_s=o.request_timeout)
        if self.url and not self.backend.healthy():
            raise pytest.UsageError(f"--url {self.url}: the server does not answer its health check; start it "
                                    "first, or use --launch so that oracle starts it")
        if self.backend.capabilities.route_choice:  # the openai family: /v1/completions, or chat when only that
            try:
                route_note = self.backend.choose_route()
            except RequestFailed as exc:
                raise pytest.UsageError(f"could not find a completion route: {exc}") from None
            if route_note:
                self.state.notes.append(route_note)

    def _embedded_command(self) -> tuple[str, dict[str, str] | None]:
        try:
            target = embedded_target(self.family, self.platform, self.options.model, self.options.server_args)
        except (ValueError, EmbeddedError) as exc:
            raise pytest.UsageError(f"--backend {self.options.backend}: {exc}") from None
        self._model_path = target.model
        return target.command, target.env

    def _load_in_process(self) -> None:
        """An in-process backend (hf): the model is loaded here; no server, no URL, nothing to restart."""
        from oracle.backends.hf import HfLoadError

        o = self.options
        self._model_path = Path(o.model) if o.model else default_model()
        try:
            self.backend = make_in_process_backend(o.backend, self._model_path, dtype=o.dtype)
        except HfLoadError as exc:
            raise pytest.UsageError(str(exc)) from None

    def _healthy(self, url: str) -> bool:
        # One client per URL for the whole health poll (a restart gets a new port, so a new client).
        if url not in self._health_backends:
            self._health_backends[url] = make_backend(self.options.backend, url)
        return self._health_backends[url].healthy()

    def _render(self) -> None:
        assert self.backend is not None
        template = self.backend.chat_template()
        if template is None:
            self.state.notes.append("the server gave no chat template (for vLLM and OpenAI-compatible servers it is "
                                    "read from the served model folder, which is not reachable from here): the "
                                    "prompts were rendered as ChatML")
        self._local_tokenizer = self._tokenizer()
        self.rendered = render_suite(self.suite, template, self.tokenize, self.backend.special_tokens())
        self._template_sha256 = template_sha256(template)

    def tokenize(self, text: str) -> list[int]:
        """Token ids with the tokenizer this run uses (local when available, else the server's)."""
        return self._local_tokenizer.encode(text) if self._local_tokenizer else self.backend.tokenize(text)

    def render_ids(self, messages: list[dict], *, suffix: str = "") -> tuple[int, ...]:
        """Messages rendered with the server's chat template, plus suffix, as this run's token ids."""
        text = render_text(self.backend.chat_template(), messages, self.backend.special_tokens())
        return tuple(self.tokenize(text + suffix))

    def _tokenizer(self) -> LocalTokenizer | None:
        """--tokenizer; else, for the embedded default, the GGUF's own byte-level BPE; else the server's."""
        if self.options.tokenizer:
            try:
                return LocalTokenizer(self.options.tokenizer)
            except (OSError, GGUFError) as exc:
                raise pytest.UsageError(str(exc)) from None
        if self._model_path is not None and self._model_path.is_file():
            try:
                return LocalTokenizer(self._model_path)
            except (GGUFError, OSError):
                return None
        served = self.backend.tokenizer_path() if self.backend.capabilities.served_tokenizer else None
        return LocalTokenizer(served) if served else None

    def _identity(self, command: str | None) -> dict:
        assert self.backend is not None
        server = self.backend.server_identity()
        model_path = str(self._model_path) if self._model_path else server.get("model_path")
        try:
            oracle_version = metadata.version("oracle")
        except metadata.PackageNotFoundError:
            oracle_version = None
        tok = self._local_tokenizer
        return {
            "backend": self.options.backend, "family": self.family, "platform": self.platform,
            "target": ("in-process" if self.in_process else "url" if self.url
                       else "launch" if self.options.launch else "embedded"),
            "url": self.backend.base_url,
            "launch_command": redact_command(command) if command else None,
            "server_args": self.options.server_args or None,
            "server": server,
            "model": {"path": model_path, "sha256": model_sha256(model_path) if model_path else None},
            "tokenizer": {"source": tok.source if tok else "server endpoint", "path": str(tok.path) if tok else None,
                          "sha256": tok.sha256 if tok else None},
            "chat_template_sha256": self._template_sha256,
            "suite_sha256": self.suite.sha256,
            "request": {"temperature": 0.0, "top_k": 1, "seed": self.options.seed, "logprobs": self.options.logprobs,
                        "cache": self.backend.capabilities.cache.policy},
            "environment": filtered_environment(),
            "host": host_identity(),
            "accelerator": accelerator_identity(),
            "packages": package_versions(),
            "oracle_version": oracle_version,
        }

    def _check_prompt_tokens(self) -> None:
        if not self.reference:
            return
        cases = self.reference.manifest["cases"]
        extra = [p.id for p in self.rendered if p.id not in cases]
        if extra:
            raise pytest.UsageError(f"prompt {extra[0]!r} is not in the reference {self.reference.path}: the suite "
                                    "changed since it was recorded; gate with the suite it was recorded with, or "
                                    "re-record the reference")
        for p in self.rendered:
            ref_ids = self.reference.record(p.id).prompt_ids
            if list(p.ids) != ref_ids:
                i = next((k for k, (a, b) in enumerate(zip(p.ids, ref_ids)) if a != b), min(len(p.ids), len(ref_ids)))
                raise pytest.UsageError(
                    f"prompt-token mismatch for {p.id!r}: this run renders {len(p.ids)} prompt tokens, the reference "
                    f"{len(ref_ids)}, first different at token {i}. The suite, chat template or tokenizer changed; "
                    "gate with the same template and tokenizer, or re-record the reference")

    # -- the run ----------------------------------------------------------------------------
    def ensure_run(self) -> None:
        if self._ran:
            return
        self._ran = True
        assert self.backend is not None
        mine = [p for p in self.rendered if self.owned is None or p.id in self.owned]
        self.result = self._run(PRIMARY, one_at_a_time(mine), self._keep)
        if self.result is None:
            return
        delta = self.result.counters_delta
        self._log_run(self.result)
        self.state.speculation = speculation_summary(self.result.records, delta)
        positions = sum(len(r.completion_ids) for r in self.result.records)
        bare = sum(1 for r in self.result.records for t in r.top_ids if not t)
        if bare and self.options.logprobs:
            why = (" (llama-server sends them only for the first token of each streamed piece, and a speculative "
                   "step streams several)" if self.family == "llamacpp" else "")
            self.state.notes.append(
                f"the server returned no top-k logprobs at {bare} of {positions} completion positions{why}; "
                "near-tie verdicts at those positions rest on the reference's margin alone")
        self.state.evidence = evidence_sources(self.result.records, delta, self.family)
        if self.state.evidence.get("downgrade"):
            self.state.notes.append(self.state.evidence["downgrade"])
        fingerprints = self.backend.system_fingerprints()
        if fingerprints:
            self.state.identity.setdefault("server", {})["system_fingerprint"] = ", ".join(fingerprints)
        self.state.complete = True
        write_report(self.report_dir, self.state)

    def _run(self, condition: Condition, waves, on_record) -> RunResult | None:
        """One condition's waves with its progress line; None when a request failed (the run is interrupted)."""
        self.progress.start(condition.key, sum(len(w) for w in waves))
        try:
            return run_waves(self.backend, waves, condition, logprobs=self.options.logprobs, seed=self.options.seed,
                             on_record=on_record)
        except RunInterrupted as exc:
            self._interrupted(exc)  # also writes the report with every record saved so far
            return None
        finally:
            self.progress.end()

    def _interrupted(self, exc: RunInterrupted) -> None:
        self.state.interruption = (f"{exc}. No request was retried; {len(exc.finished)} finished record(s) of "
                                   f"that condition kept in {self.report_dir / 'records'}")
        write_report(self.report_dir, self.state)

    def _log_run(self, result: RunResult, **extra) -> None:
        self.state.runs.append({"condition": result.condition.key, "wall_s": round(result.wall_s, 3),
                                "requests": len(result.records), **extra,
                                "counters_before": _as_dict(result.counters_before),
                                "counters_after": _as_dict(result.counters_after)})

    def _keep(self, record: Record, *, report_every_s: float = 0.0) -> None:
        """Save the record at once; rewrite the partial report (at most every report_every_s seconds)."""
        save_record(self.report_dir / "records", record)
        if record.condition == PRIMARY:
            self.records[record.id] = record
        self.state.finished[f"{record.key}@{record.condition.key}"] = record.meta()
        now = time.monotonic()
        if now - self._report_written >= report_every_s:
            write_report(self.report_dir, self.state)
            self._report_written = now
        self.progress.record(len(record.completion_ids))

    def _keep_in_wave(self, record: Record) -> None:
        # Many requests finish together in a wave: the records are saved each, the report (a dump of
        # the whole state) at most twice a second, so writing never competes with the streams.
        self._keep(record, report_every_s=0.5)

    # -- checks -----------------------------------------------------------------------------
    def _not_run(self, check_id: str, kind: str) -> Check:
        return Check(check_id, kind, NOT_RUN, f"not run: {self.state.interruption}")

    def record_check(self, pid: str) -> Check:
        rec = self.records.get(pid)
        if rec is None:
            return self._not_run(f"record[{pid}]", "record")
        if rec.ids_source == IDS_FROM_TEXT:
            return Check(f"record[{pid}]", "record", PASS, f"{len(rec.text)} characters of text, finish "
                         f"{rec.finish_reason} (the server returned no token ids: text only)")
        return Check(f"record[{pid}]", "record", PASS,
                     f"{len(rec.completion_ids)} tokens, finish {rec.finish_reason}, sha256 {rec.completion_sha256[:12]}")

    def tokens_check(self, pid: str) -> Check:
        cid = f"tokens[{pid}]"
        rec = self.records.get(pid)
        if rec is None:
            return self._not_run(cid, "tokens")
        assert self.reference is not None
        ref = self.reference.record(pid)
        if IDS_FROM_TEXT in (rec.ids_source, ref.ids_source):
            return text_check(cid, ref, rec)
        result = compare_tokens(TokenSide.of(ref), TokenSide.of(rec), near_tie_nats=self.options.near_tie_nats)
        evidence = {"first_divergence": result.first_divergence, "reference_length": result.reference_length,
                    "candidate_length": result.candidate_length, "reference_token": result.reference_token,
                    "candidate_token": result.candidate_token, "margin_nats": result.margin_nats,
                    "reason": result.reason, "condition": rec.condition.key}
        if result.verdict == EXACT:
            return Check(cid, "tokens", EXACT, f"{len(rec.completion_ids)}/{len(ref.completion_ids)} tokens identical, "
                         f"finish {rec.finish_reason}", [], evidence)
        where = "finish reason" if result.first_divergence is None else f"first divergence at token {result.first_divergence}"
        detail = f"{where} of {len(ref.completion_ids)} ({result.reason})"
        lines = describe_split(ref, rec, result, self._decode)
        evidence["split"] = split_view(ref, rec, result.first_divergence, self._decode)
        if self.envelope and self.envelope.covers(pid, result.split_position):
            first = self.envelope.varies[pid]["first_position"]
            return Check(cid, "tokens", WITHIN_NOISE, f"{detail}; the reference itself varies on this prompt from "
                         f"token {first} ({', '.join(self.envelope.varies[pid]['conditions'])})", lines, evidence)
        return Check(cid, "tokens", result.verdict, detail, lines, evidence)

    def _server_item(self, name: str, server: int | None) -> str:
        return name if server is None else f"{name}[{server_label(server)}]"

    def _no_prompts_here(self, cid: str, kind: str) -> Check | None:
        if self.result is not None and not self.result.records and self.owned is not None:
            return Check(cid, kind, INFO, f"{server_label(self.server_index)} ran no prompt at c1: "
                         f"{len(self.rendered)} prompt(s) for {self.options.workers} workers")
        return None

    def cache_check(self, server: int | None = None) -> Check:
        cid = self._server_item("cache-zero", server)
        if not self.state.complete:
            return self._not_run(cid, "cache")
        if (idle := self._no_prompts_here(cid, "cache")) is not None:
            return idle
        if self.in_process:
            check = Check(cid, "cache", PASS, f"in-process backend: no server and no cache shared between "
                          f"requests; each of the {len(self.result.records)} requests ran with a fresh KV cache",
                          [], {"requests": len(self.result.records), "in_process": True})
        else:
            check = cache_zero_check(self.result.records, self.result.counters_delta, check_id=cid,
                                     cache=self.backend.capabilities.cache)
        self.state.cache = check.evidence | {"verdict": check.verdict}
        return check

    def speculation_check(self, server: int | None = None) -> Check:
        cid = self._server_item("speculation", server)
        if not self.state.complete:
            return self._not_run(cid, "speculation")
        if (idle := self._no_prompts_here(cid, "speculation")) is not None:
            return idle
        summary = self.state.speculation or {}
        configured = self.backend.speculative_config()
        summary["declared"] = self.options.speculative
        summary["server_config"] = configured
        if not (self.options.speculative or configured or summary.get("drafted")):
            return Check(cid, "speculation", INFO, "no speculation to prove: not declared "
                         "(--speculative), no speculative setting reported by the server, no draft counts; "
                         "declare a speculative candidate with --speculative", [], summary)
        return speculation_check(summary, check_id=cid)

    # -- logits against the reference (teacher-forced along its path) ---------------------------
    def _ensure_logits(self) -> None:
        """Every prompt's candidate distributions along the reference path, once, after the gated run."""
        if self._logits_done or not self.state.complete or self.state.interruption:
            return
        self._logits_done = True
        assert self.reference is not None
        self.progress.start("teacher-forced", len(self.rendered))
        try:
            for p in self.rendered:
                row = compare_prompt(self.backend, self.reference.record(p.id), self.records.get(p.id),
                                     logprobs=self.options.logprobs, seed=self.options.seed)
                self.logit_rows[p.id] = row
                self.progress.record(row.path.teacher_forced if row.path else 0)
        finally:
            self.progress.end()
        o = self.options
        self.state.logits = logits_report(
            self.logit_rows, family=self.family, candidate_top_k=o.logprobs, reference_kind=self.reference.kind,
            reference_logits=self.reference.manifest.get("logits") or {"top_k": self.reference.manifest.get(
                "run", {}).get("logprobs")},
            thresholds={"kld_max": o.kld_max, "same_top1_min_percent": o.same_top1_min}, decode=self._decode)
        write_report(self.report_dir, self.state)

    def logits_check(self, pid: str) -> Check:
        self._ensure_logits()
        row = self.logit_rows.get(pid)
        return row.check(f"logits[{pid}]") if row else self._not_run(f"logits[{pid}]", "logits")

    def logits_suite_check(self) -> Check:
        self._ensure_logits()
        if self.state.logits is None:
            return self._not_run("logits", "logits")
        return suite_check(self.state.logits, kld_max=self.options.kld_max, same_top1_min=self.options.same_top1_min)

    def logits_floor_check(self) -> Check:
        """Record mode: the reference path scored by the same weights in --floor-dtype (what precision alone does)."""
        if not self.state.complete or self.state.interruption:
            return self._not_run("logits-floor", "logits")
        o = self.options
        from oracle.backends.hf import HfLoadError

        try:
            floor_backend = make_in_process_backend(o.backend, self._model_path, dtype=o.floor_dtype)
        except HfLoadError as exc:
            return Check("logits-floor", "logits", FAIL, f"could not load the floor model: {exc}")
        rows = {}
        self.progress.start(f"floor-{o.floor_dtype}", len(self.records))
        try:
            for pid, rec in self.records.items():
                rows[pid] = compare_prompt(floor_backend, rec, None, logprobs=o.logprobs, seed=o.seed)
                self.progress.record(len(rows[pid].positions))
        finally:
            self.progress.end()
            del floor_backend
        self.logits_floor = precision_floor(rows, dtype=o.floor_dtype, reference_dtype=o.dtype)
        self.state.logits = {"floor": self.logits_floor}
        check = logits_check("logits-floor", self.logits_floor["overall"], kld_max=None, same_top1_min=None,
                             gating=False, evidence={"floor": self.logits_floor})
        check.detail = f"precision floor, {o.floor_dtype} vs {o.dtype} on the same weights: {check.detail}"
        return check

    # -- ladder levels and later boots --------------------------------------------------------
    def _reference_record_map(self) -> dict[str, Record] | None:
        # Ladder levels and boots are compared with c1 only against an f16 reference: its greedy tokens are not
        # the candidate's to match (its logits are compared instead).
        if self.reference is None or self.f16_gate:
            return None
        if self._reference_records is None:
            self._reference_records = {p.id: self.reference.record(p.id) for p in self.rendered}
        return self._reference_records

    def _condition_ready(self, cid: str, kind: str) -> Check | None:
        if not self.state.complete or self.state.interruption:
            return self._not_run(cid, kind)
        return self._ensure_baseline(cid, kind)

    def _ensure_baseline(self, cid: str, kind: str) -> Check | None:
        """Conditions compare with c1 on the same server: under xdist this server first runs, at c1, the
        prompts that other servers ran (once). Its cache evidence goes with the next condition's check."""
        missing = [p for p in self.rendered if p.id not in self.records]
        if not missing:
            return None
        result = self._run(PRIMARY, one_at_a_time(missing), self._keep)
        if result is None:
            return self._not_run(cid, kind)
        self._log_run(result, baseline=True)
        self._baseline = result
        return None

    def _condition_rows(self, result: RunResult) -> list[dict]:
        references = self._reference_record_map()
        rows = compare_condition(result.records, self.records, references, self.envelope,
                                 near_tie_nats=self.options.near_tie_nats)
        # One split view per prompt and condition (its earliest split) for the report's split viewer.
        by_key = {r.key: r for r in result.records}
        shown: set[str] = set()
        for row in sorted(rows, key=lambda r: _NO_SPLIT if first_split(r) is None else first_split(r)):
            if row["verdict"] == EXACT or row["prompt"] in shown:
                continue
            shown.add(row["prompt"])
            against, side = ((self.records, row["vs_c1"]) if row["vs_c1"]["verdict"] != EXACT
                             else (references, row["vs_reference"]))
            row["split"] = split_view(against[row["prompt"]], by_key[row["record"]], side["first_divergence"],
                                      self._decode) | {"against": "c1" if against is self.records else "reference"}
        self.condition_rows[result.condition.key] = rows
        return rows

    def ladder_check(self, level: int) -> Check:
        cid = f"ladder[c{level}]"
        if (early := self._condition_ready(cid, "ladder")) is not None:
            return early
        waves = ladder_waves(self.rendered, level, self.options.ladder_mode)
        result = self._run(ladder_condition(level), waves, self._keep_in_wave)
        if result is None:
            return self._not_run(cid, "ladder")
        rows = self._condition_rows(result)
        check = condition_check(cid, "ladder", f"c{level}", rows, recording=self.mode == "record",
                                required=required_exact(level, len(rows), self.options.ladder_min))
        reached = min(result.wave_overlap) if result.wave_overlap else 0
        overlap = {"asked": level, "reached": reached, "per_wave": result.wave_overlap,
                   "server_peak": result.server_peak, "waves": len(waves)}
        check.evidence["overlap"] = overlap
        check.detail += f"; overlap reached {reached} of {level}"
        if result.server_peak is not None:
            check.detail += f" (server saw up to {result.server_peak} running)"
        if reached < level and check.verdict != DIVERGENT:
            check.verdict, check.inconclusive_kind = INCONCLUSIVE, "overlap"
            check.lines.insert(0, f"only {reached} of {level} requests generated at the same time: the level "
                                  "was not proven (give the server more slots, e.g. llama-server -np N)")
        self._condition_evidence(check, result)
        self.state.ladder[f"c{level}"] = _condition_summary(check, rows) | {"overlap": overlap}
        self._update_determinism()
        return check

    def boot_check(self, boot: int) -> Check:
        cid = f"boot[{boot}]"
        if (early := self._condition_ready(cid, "boot")) is not None:
            return early
        assert self.server is not None, "--boots is refused with --url"
        try:
            self.server.restart(self._healthy)
        except LaunchError as exc:
            self.state.interruption = f"boot {boot}: the server did not come back after the restart: {exc}"
            write_report(self.report_dir, self.state)
            return self._not_run(cid, "boot")
        self.backend = make_backend(self.options.backend, self.server.url, timeout_s=self.options.request_timeout)
        self.state.identity.setdefault("boots", {})[str(boot)] = {"server": self.backend.server_identity(),
                                                                  "url": self.server.url}
        result = self._run(Condition(boot=boot), one_at_a_time(self.rendered), self._keep)
        if result is None:
            return self._not_run(cid, "boot")
        rows = self._condition_rows(result)
        check = condition_check(cid, "boot", f"boot {boot}", rows, required=len(rows),
                                recording=self.mode == "record")
        self._condition_evidence(check, result)
        self.state.boots[str(boot)] = _condition_summary(check, rows)
        self._update_determinism()
        return check

    def _condition_evidence(self, check: Check, result: RunResult) -> None:
        """Cache reuse under any condition fails it; its speculation counts are kept beside it."""
        self._log_run(result, overlap=check.evidence.get("overlap"))
        baseline, self._baseline = self._baseline, None
        if baseline is not None:  # the c1 baseline this condition needed: its cache use counts here too
            self._fold_cache(check, baseline, "baseline_cache", "c1 baseline on this server: ")
        self._fold_cache(check, result, "cache", "")
        check.evidence["speculation"] = speculation_summary(result.records, result.counters_delta)

    def _fold_cache(self, check: Check, result: RunResult, key: str, prefix: str) -> None:
        """The run's cache-zero evidence under check.evidence[key]; reuse fails the check, named first."""
        cache = cache_zero_check(result.records, result.counters_delta, check_id=check.id, cache=self.backend.capabilities.cache)
        check.evidence[key] = cache.evidence | {"verdict": cache.verdict}
        if cache.verdict == "fail":
            check.verdict = "fail"
            check.detail = f"{prefix}{cache.detail}; {check.detail}"
            check.lines = cache.lines + check.lines

    def _update_determinism(self) -> None:
        repeat = self.condition_rows.get(ladder_condition(1).key)
        boots = [rows for key, rows in self.condition_rows.items() if not key.startswith("boot1-")]
        self.state.determinism = classify_determinism(repeat, boots)

    def _decode(self, ids: list[int]) -> str:
        if self._local_tokenizer:
            return self._local_tokenizer.decode(ids)
        try:
            return self.backend.detokenize(ids)
        except Exception:  # the server may be gone (that is why we are describing a failure); ids still say it
            return f"<ids {ids}>"

    def judge(self, check: Check) -> bool:
        if self.role == "worker" and self.options.workers > 1:
            url = self.backend.base_url if self.backend else self.url
            check.evidence["server"] = {"label": server_label(self.server_index), "url": url}
            check.detail += f" (on {server_label(self.server_index)}, {url})"
        ok = passed(check, allow_near_ties=self.options.allow_near_ties,
                    allow_inconclusive=self.options.allow_inconclusive)
        check.outcome = "passed" if ok else "failed"
        self.state.checks = [c for c in self.state.checks if c.id != check.id] + [check]
        write_report(self.report_dir, self.state)
        return ok

    # -- finish -----------------------------------------------------------------------------
    def finish(self) -> str | None:
        """Write the reference (record mode, everything passed) and the final report; stop the server."""
        message = None
        self.state.closed = True
        try:
            if self.mode == "record" and self._ran and self.role != "worker":  # the controller writes it
                message = self._write_reference(list(self.records.values()), self.condition_rows)
            # No default report folder for runs that never started (--collect-only); an explicit one is honoured.
            if self.report_dir.exists() or self.options.report_dir is not None:
                write_report(self.report_dir, self.state)
        finally:
            if self.server:
                self.server.stop()
        return message

    def _reference_logits(self, records: list[Record]) -> dict:
        """What a logits gate needs to know about this reference: its dtype, top-k, tail mass and floor."""
        return {"dtype": self.options.dtype if self.in_process else None, "top_k": self.options.logprobs,
                "tail_mass": bool(records) and all(r.tail_mass for r in records),
                "backend": self.options.backend, "floor": self.logits_floor}

    def finish_merged(self, payloads: dict[int, dict | None]) -> str | None:
        """The xdist controller: merge the workers' states into one report (and reference)."""
        self.state.closed = True
        if not payloads and not self.report_dir.exists():
            return None  # nothing ran (--collect-only)
        rows = merge_states(self.state, payloads, workers=self.options.workers, root=self.report_dir,
                            allow_mixed=self.options.allow_mixed_servers)
        message = None
        if self.mode == "record" and payloads:
            message = self._write_reference(owned_records(self.state, self.report_dir), rows)
        write_report(self.report_dir, self.state)
        return message

    def _write_reference(self, records: list[Record], rows: dict[str, list[dict]]) -> str:
        if self.state.verdict() != "pass":
            self.state.notes.append("no reference was written: the run was not complete and clean")
            return f"no reference written to {self.options.record}: the record run did not pass"
        noise = NoiseEnvelope.from_rows(rows, determinism=self.state.determinism) if rows else None
        ref = write_reference(self.options.record, records, kind=self.options.reference_kind,
                              identity=self.state.identity, run=self._run_settings(), canaries=self.state.canaries,
                              overwrite=self.options.record_overwrite, noise=noise.as_json() if noise else None,
                              logits=self._reference_logits(records))
        self.state.recorded_reference = str(ref.path)
        return f"reference recorded in {ref.path}"

    def _run_settings(self) -> dict:
        return {"suite": self.state.suite, "logprobs": self.options.logprobs, "seed": self.options.seed,
                "max_tokens": self.options.max_tokens,
                "chat_template_sha256": self.state.identity.get("chat_template_sha256"),
                "tokenizer": self.state.identity.get("tokenizer")}


def _fresh(folder: Path) -> Path:
    """folder, or folder-2, folder-3, ... when a run in the same second already took it."""
    candidate, n = folder, 1
    while candidate.exists():
        n += 1
        candidate = folder.with_name(f"{folder.name}-{n}")
    return candidate


def _condition_summary(check: Check, rows: list[dict]) -> dict:
    return {"verdict": check.verdict, "detail": check.detail, "counts": check.evidence["counts"],
            "records": len(rows), "required": check.evidence["required"],
            "first_divergences": sorted(r["vs_c1"]["first_divergence"] for r in rows
                                        if r["vs_c1"]["first_divergence"] is not None)}


def _as_dict(counters) -> dict | None:
    return counters.as_dict() if counters is not None else None
