"""The gate session: it orchestrates one run from options to verdicts and does no work itself.

    session = GateSession(options); session.start()
    session.judge(session.produce(kind, key)); session.finish()      # an item's kind and key (gate/items.py)

The plan settles what runs, the target brings up the server, the prompt set renders and tokenizes,
the recorder runs conditions and saves records, the check producers answer the items, and the
report state holds what the report says.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from oracle.backends import RequestFailed
from oracle.backends.schemas import AnswerBroken
from oracle.checks import CHECKS, SECTIONS, CheckParts
from oracle.compare.verdicts import Check, passed
from oracle.gate.placement import server_label
from oracle.gate.plan import GatePlan
from oracle.gate.primary import PrimaryRun
from oracle.gate.recording import record_lock, write_run_reference
from oracle.plan.run_plan import RunPlanHook
from oracle.gate.registry import CheckRegistry, Finding
from oracle.gate.options import GateOptions
from oracle.report.writer import ReportFile, ReportOwner
from oracle.backends.gguf import GGUFError
from oracle.run.prompting import ChatTemplateError
from oracle.run.prompts import PromptMismatch, PromptSet
from oracle.run.recorder import Recorder
from oracle.run.served_context import ServedContext
from oracle.store.folders import discard_folder
from oracle.store.identity import run_identity
from oracle.store.json_files import InputFileError
from oracle.targets import TargetError, make_target
from oracle.targets.cache import EmbeddedError

__all__ = ["GateSession"]

PREFIX_CACHING_NOTE = ("the server runs with prefix caching on: each request's own cache_salt keeps it from hitting "
                       "another's blocks, and cache-zero checks that; for gating, start vLLM with "
                       "--no-enable-prefix-caching")


class GateSession(ReportOwner):
    """One server's run: without xdist, or as xdist worker `worker` (whose report goes to report_dir)."""

    def __init__(self, options: GateOptions, *, worker: int | None = None, report_dir: Path | None = None) -> None:
        self.plan = GatePlan.open(options)
        self.options = self.plan.options
        self.worker = worker  # None: no xdist; else the worker's index, which is its server's
        self.report = ReportFile(self.plan.report_dir(report_dir), self.plan.new_state(), SECTIONS)
        if worker is None:  # an xdist worker's folder is its controller's, checked there
            self.plan.check_folders(self.report.folder)
        self.folder_was_there = self.report.folder.exists()  # --oracle-plan leaves the folder as it found it
        self.target = None  # made in start(): an embedded default builds or fetches what it needs then
        self.recorder = Recorder(self.report, None, logprobs=self.options.logprobs, seed=self.options.seed,
                                 sampling=self.options.sampling)
        self.prompts: PromptSet | None = None
        self.owned: set[str] | None = None  # prompts this server runs at c1 (None: all of them)
        self.primary: PrimaryRun | None = None
        self.context: ServedContext | None = None  # what the server really holds, read at start
        self.chunk = None  # the server's prefill chunk (PrefillChunk), read at start
        self.observers: list = []  # what the check kinds observe of each finished run (Producers.observe)
        self.watches: list = []  # what the check kinds measure around the primary run (Producers.watch)
        self.checks = CheckRegistry()
        self.lock = record_lock(self.plan) if worker is None else None  # the one writer of the reference
        self.run_plan = RunPlanHook(self)  # the plan after the warm-up, the budget's drops, the ETA

    @property
    def backend(self):
        return self.recorder.backend

    def select(self, prompt_ids: set[str], owned: set[str] | None = None) -> None:
        """Keep only these prompts (the ones whose items are selected); an empty set keeps all.
        owned: the prompts this server runs at c1 (an xdist worker's share)."""
        if prompt_ids:
            suite = self.plan.suite.only(prompt_ids)
            self.plan = dataclasses.replace(self.plan, suite=suite)
            self.state.prompt_ids = suite.ids()
            self.state.suite["selected"] = len(suite.prompts)
        self.owned = owned

    # -- start: target up, prompts rendered, checked against the reference --------------------
    def start(self) -> None:
        self.prepare_report_dir()
        self.report.write()
        try:
            self.target = make_target(self.options, worker=self.worker or 0, log_dir=self.report.folder)
            self.recorder.server_log = lambda: self.target.log_path
            self.recorder.backend = self.target.up()
            self.prompts = PromptSet.open(self.plan.suite, self.backend, tokenizer=self.options.tokenizer,
                                          model_path=self.target.model_path)
            self.state.identity = run_identity(self.plan, self.target, self.backend, self.prompts,
                                               launch_command=self.target.configured_command)
            vocab = self.backend.vocab_size()  # read once here: every answer's ids are checked against it
            if vocab and (self.options.logprobs or 0) > vocab:
                raise self._refused(f"--logprobs {self.options.logprobs}: the served vocabulary has {vocab} "
                                    f"tokens; give at most --logprobs {vocab} (the whole vocabulary)")
            self.context = ServedContext.read(self.backend)
            self.state.identity["served_context"] = self.context.as_json()
            beyond = self.prompts.beyond_context(self.context.tokens)
            if beyond:
                raise self._refused(beyond)
            self.chunk = self.backend.prefill_chunk(self.target.configured_command)  # the server's own, for the checks
            self.state.identity["prefill_chunk"] = self.chunk.as_json()
            if self.plan.reference:
                self.prompts.check_against(self.plan.reference)
        except (TargetError, PromptMismatch, ChatTemplateError, OSError, GGUFError, InputFileError) as exc:  # its fix
            raise self._refused(str(exc)) from None
        except AnswerBroken as exc:  # before any completion request: the server itself is not fit to be gated
            raise self._refused(f"the server's answer at start is not what its API declares, so nothing was sent "
                                f"to it: {exc}; check that --oracle-url / --backend name this kind of server") from None
        except (RequestFailed, EmbeddedError) as exc:
            raise self._refused(f"could not read the server's template or tokenizer: {exc}") from None
        for note in self.target.notes + self.prompts.notes:
            self.state.note(note)
        if self.state.identity["server"].get("prefix_caching") == "True":
            self.state.note(PREFIX_CACHING_NOTE)
        self._register()
        self.report.write()

    def _refused(self, message: str) -> pytest.UsageError:
        """The run cannot start: the report on disk says why (before any request), the caller raises it."""
        self.state.interruption = f"refused before any request: {message}"
        return pytest.UsageError(message)

    def _register(self) -> None:
        parts = (self.plan, self.recorder, self.prompts, self.state)
        for check in CHECKS:
            built = check.build(CheckParts(*parts, self.target, served=self.context, chunk=self.chunk,
                                           observers=self.observers))
            for kind, producer in built.answers.items():
                self.checks.register(kind, producer)
            if built.observe is not None:
                self.observers.append(built.observe)
            if built.watch is not None:
                self.watches.append(built.watch)
        self.primary = PrimaryRun(*parts, owned=self.owned, observers=self.observers, watches=self.watches)

    # -- items --------------------------------------------------------------------------------
    def ensure_run(self) -> None:
        findings = self.primary.ensure()
        if findings:
            self.state.apply(findings)
            self.report.write()

    def produce(self, kind: str, key=None) -> Check:
        """The check of one gate item; what the producer found goes into the report."""
        self.ensure_run()
        finding: Finding = self.checks.produce(kind, key)
        self.state.apply(finding.report)
        return finding.check

    def judge(self, check: Check) -> bool:
        if self.worker is not None and self.options.workers > 1:
            label, url = server_label(self.worker), self.backend.base_url if self.backend else None
            check.evidence["server"] = {"label": label, "url": url}
            check.detail += f" (on {label}, {url})"
        ok = passed(check, allow_near_ties=self.options.allow_near_ties,
                    allow_inconclusive=self.options.allow_inconclusive,
                    allow_logprobs_moved=self.options.allow_logprobs_moved)
        check.outcome = "passed" if ok else "failed"
        self.state.judged(check)
        self.report.write()
        return ok

    def note(self, text: str) -> None:
        self.state.note(text)

    # -- finish -----------------------------------------------------------------------------
    def finish(self) -> str | None:
        """Write the reference (record mode, everything passed, not an xdist worker) and the final report;
        stop the server."""
        message = None
        self.state.closed = True
        try:
            if self.plan.mode == "record" and self.primary is not None and self.primary.ran and self.worker is None:
                message = write_run_reference(self.plan, self.state, list(self.recorder.records.values()),
                                              kept=str(self.report.folder / "records"))
        finally:
            if self.lock is not None:
                self.lock.release()
            if self.target is not None:
                self.target.stop()  # before the last write: the server's log is sealed as it ends
        if self.options.plan_only:  # the plan was the answer: no report of a run that judged nothing
            discard_folder(self.report.folder, made=not self.folder_was_there)
            return message
        # No default report folder for runs that never started (--collect-only); an explicit one is honoured.
        if self.report.folder.exists() or self.options.report_dir is not None:
            self.report.write()
        return message
