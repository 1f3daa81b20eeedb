"""The `speed-ab` item: the reference config (--reference-launch) and the candidate measured alternately in this
session, in ABBA rounds (`speed/interleave.py`), and the A/A control (--speed-control). Its comparison becomes the
card's `vs_reference` (which `speed` judges with --min-speedup); the recorded one is kept as `vs_recorded_reference`.

    ab = InterleaveChecks(plan, recorder, prompts, state, target)
    ab.check().check.verdict          # info (measured), or not run (a server did not start: the run stops, exit 2)

one-at-a-time: every pass on its own boot (the other side's server stopped), a warm-up after each boot; both-up:
reference and candidate (and the control's second reference) up together for the whole session, each warmed up
once. A pass (`_measure`) is the speed card's c1 pass: every suite prompt once, its decode rate per prompt.
"""

from __future__ import annotations

import dataclasses
import math

from oracle.compare.evidence import cache_zero_check
from oracle.redaction import redact_command
from oracle.compare.verdicts import INFO, NOT_RUN, Check
from oracle.checks.descriptor import Finding, not_run
from oracle.speed.servers import Server, boot, candidate_back, reference_target
from oracle.run.runner import RunInterrupted, one_at_a_time, run_waves
from oracle.run.warmup import WARMUP_CONDITION, warmup_prompt
from oracle.speed.card import prompt_rows
from oracle.speed.credible import counters_of, credibility
from oracle.speed.interleave import (CANDIDATE, CONTROL, MIN_ROUNDS, REFERENCE, Measurement, abba_order,
                                     between_run_ratio, control_summary, interleaved_comparison, round_medians)
from oracle.speed.launch_match import launch_match
from oracle.speed.noise import noise_band, spread_band
from oracle.speed.report import band_words, speed_words
from oracle.speed.sequential import control_prior, path_words, round_logs, verdict_words
from oracle.speed.validity import history_speculation
from oracle.store.records import Condition
from oracle.targets import TargetError

__all__ = ["InterleaveChecks"]

PASS_CONDITION = Condition(boot=0, run=3)  # an interleaved pass: never a condition of the suite, never saved
RECORDED_NOTE = ("reference measured in another run: the interval is within-run (prompt-to-prompt spread of the two "
                 "runs), not between-run; --reference-launch measures both in one session")


class InterleaveChecks:
    def __init__(self, plan, recorder, prompts, state, target) -> None:
        self.plan, self.recorder, self.prompts, self.state, self.target = plan, recorder, prompts, state, target
        self.ab = plan.options.check("speed_ab")
        self.figure = "conventional_tok_s"
        self._warmup = None  # the warm-up prompt, rendered while the candidate is up
        self._prior = None  # the A/A control's spread (variance, df), measured before the A/B session

    # -- one pass -----------------------------------------------------------------------------
    def _measure(self, backend) -> Measurement:
        """The speed card's c1 pass over the suite on this backend: each prompt once, its decode rate (the figure
        chosen from the primary run), the pass's cache-zero verdict and why its timestamps are not credible."""
        result = run_waves(backend, one_at_a_time(self.prompts.rendered), PASS_CONDITION,
                           logprobs=self.plan.options.logprobs, seed=self.plan.options.seed)
        rows = prompt_rows(result.records)
        rates = {k: v[self.figure] for k, v in rows.items() if v.get(self.figure)}
        cache = cache_zero_check(result.records, result.counters_delta, check_id="speed-ab",
                                 cache=backend.capabilities.cache).verdict
        credible = credibility(rows, **counters_of(result, backend))
        return Measurement(rates=rates, figure=self.figure, wall_s=result.wall_s,
                           tokens=sum(len(r.completion_ids) for r in result.records), cache=cache,
                           credible=list(credible["reasons"]))

    def _warmup_prompt(self):
        """The warm-up prompt, generating no more than the suite's longest completion: after each boot it wakes
        the server for passes of that shape without costing more than one of them."""
        p = warmup_prompt(self.prompts)
        longest = max((q.prompt.max_tokens for q in self.prompts.rendered), default=p.prompt.max_tokens)
        return dataclasses.replace(p, prompt=dataclasses.replace(p.prompt,
                                                                 max_tokens=min(p.prompt.max_tokens, longest)))

    def _warm(self, backend) -> None:
        n = self.plan.options.warmup
        if n:
            run_waves(backend, [[(self._warmup, i)] for i in range(n)], WARMUP_CONDITION,
                      logprobs=self.plan.options.logprobs, seed=self.plan.options.seed)

    # -- the session ----------------------------------------------------------------------------
    def check(self, key=None) -> Finding:
        cid = "speed-ab"
        card = self.state.states["speed"].card
        if not self.state.complete or self.state.interruption or card is None:
            return not_run(self.state, cid, "speed")
        self.figure = ("conventional_tok_s" if card["prompts"] and all(v.get("conventional_tok_s")
                                                                       for v in card["prompts"].values())
                       else "after_ttft_tok_s")
        self._warmup = self._warmup_prompt()  # rendered now: in one-at-a-time the candidate will be down
        candidate = Server(CANDIDATE, self.target, own=False)
        candidate.backend = self.recorder.backend
        servers = {CANDIDATE: candidate, REFERENCE: Server(REFERENCE, self._reference("reference-server"), own=True)}
        if self.ab.control:
            servers[CONTROL] = Server(CONTROL, self._reference("control-server"), own=True)
        block = {"servers": self.ab.servers, "rounds": self.ab.rounds, "order": [], "figure": self.figure,
                 "design": "sequential" if self.ab.sequential else "fixed", "rounds_max": self.ab.most_rounds,
                 "reference_launch": redact_command(self.ab.command), "passes": [], "control": None}
        error, pairs, control = None, [], []
        try:
            if self.ab.servers == "both-up":  # every server up first (one that cannot start stops it early), then warm
                for server in servers.values():
                    if server.backend is None:
                        boot(server)
                for server in servers.values():
                    self._warm(server.backend)
            # the A/A control first: its spread is the A/B session's prior (a clear case decides in 2 rounds)
            control = [self._rounds(servers, REFERENCE, CONTROL, block, f"aa{i + 1}") for i in range(self.ab.control)]
            self._prior = control_prior([round_logs([round_medians(b, a) for b, a in aa]) for aa in control])
            pairs = self._rounds(servers, REFERENCE, CANDIDATE, block, "ab")
        except (TargetError, RunInterrupted) as exc:
            error = f"speed-ab: {exc}"
        finally:
            for server in servers.values():
                if server.own:
                    server.stop()
        error = error or candidate_back(candidate, self.recorder, self.prompts, self.state, "speed-ab")
        if error:
            stopped = f"{error}. The run stops here; no request was retried"
            return Finding(Check(cid, "speed", NOT_RUN, f"not run: {stopped}"),
                           {"interruption": stopped, "speed": {"interleave": block}})
        return self._finding(cid, card, block, pairs, control)

    def _reference(self, folder: str):
        return reference_target(self.plan, self.target, self.recorder, folder, self.ab.command)

    def _backend(self, server: Server, servers: dict):
        """The server's backend for its next pass: both-up, the running one; one-at-a-time, every other server
        stopped, then a fresh boot and its warm-up."""
        if self.ab.servers == "both-up":
            return server.backend
        for other in servers.values():
            if other is not server:
                other.stop()
        backend = boot(server)
        self._warm(backend)
        return backend

    def _test(self, prior: bool = True):
        """The sequential test at the speed item's bar (with the A/A control's spread as its prior once measured);
        None in the fixed design (--speed-rounds)."""
        if not self.ab.sequential:
            return None
        test = self.ab.test(self.plan.options.check("speed").min_speedup)
        return dataclasses.replace(test, prior=self._prior) if prior else test

    def _decided(self, pairs: list[tuple]) -> bool:
        """The sequential test has left its bounds over the rounds so far (never in the fixed design)."""
        test = self._test()
        if test is None:
            return False
        logs, levels = round_logs([round_medians(b, a) for b, a in pairs])
        return len(logs) >= MIN_ROUNDS and test.run(logs, levels)["decision"] in ("pass", "fail")

    def _rounds(self, servers: dict, first: str, second: str, block: dict, label: str) -> list[tuple]:
        """ABBA rounds of `first` (A) and `second` (B), until the sequential test decides or the rounds run out;
        [(B pass, A pass)] per round, each pass kept in the block (and the report written) as it finishes."""
        pairs = []
        for number, order in enumerate(abba_order(self.ab.most_rounds, first, second), start=1):
            passes = {}
            for side in order:
                server = servers[side]
                passes[side] = m = self._measure(self._backend(server, servers))
                m.boot = server.boots or None
                block["passes"].append({"session": label, "round": number, "side": side, **m.as_json()})
                self.state.apply({"speed": {"interleave": block}})
                self.recorder.report.write()
            block["order"].append(f"{label}: " + "".join("A" if s == first else "B" for s in order))
            pairs.append((passes[second], passes[first]))
            if self._decided(pairs):
                break
        return pairs

    def _control(self, control: list) -> dict:
        """The A/A sessions: each one's interval, point and (sequential) decision."""
        ratios = [between_run_ratio([m[:2] for m in (round_medians(b, a) for b, a in aa) if m]) or {}
                  for aa in control]
        test = self._test(prior=False)  # the A/A sessions ran before the prior existed
        decisions = None
        if test is not None:
            logs = [round_logs([round_medians(b, a) for b, a in aa]) for aa in control]
            decisions = [test.run(x, u)["decision"] if len(x) >= MIN_ROUNDS else None for x, u in logs]
        return control_summary([r.get("ci95") for r in ratios], [r.get("median") for r in ratios], decisions)

    def _band(self, control: dict | None, pairs: list) -> dict:
        """The noise band: where the A/A points landed; without a control, this session's pass-to-pass spread."""
        if control and control.get("points"):
            return noise_band(control)
        medians = [m for m in (round_medians(b, a) for b, a in pairs) if m and m[0] > 0 and m[1] > 0]
        spread = spread_band([math.log(m[0]) for m in medians], [math.log(m[1]) for m in medians])
        return spread or noise_band(None, self.plan.options.check("speed").noise_floor)

    def _finding(self, cid: str, card: dict, block: dict, pairs: list, control: list) -> Finding:
        ident = self.state.identity
        candidate_cmd, reference_cmd = ident.get("launch_command"), self.ab.command
        history = history_speculation(("the reference launch command", reference_cmd))
        reasons = list(card.get("diagnostics") or []) + ([f"reference: {history}"] if history else [])
        versus = interleaved_comparison(pairs, diagnostics=reasons, figure=self.figure,
                                        launch=launch_match(candidate_cmd, reference_cmd), test=self._test())
        if control:
            block["control"] = self._control(control)
        versus["noise"] = self._band(block["control"], pairs)
        speed = {"interleave": block, "vs_reference": versus}
        if "vs_reference" in card and card["vs_reference"].get("interval") != "between-run":
            speed["vs_recorded_reference"] = card["vs_reference"]
        words = (speed_words(versus) if versus.get("median") is not None
                 else f"{versus['label']} ({(versus['reasons'] or ['no comparison'])[0]})")
        lines = [f"order {', '.join(block['order'])}; {self.ab.servers}"]
        if versus.get("sequential"):
            lines += [verdict_words(versus["sequential"]), path_words(versus["sequential"])]
        if block["control"]:
            lines.append(block["control"]["words"])
        lines.append(band_words(versus["noise"]))
        evidence = {"label": versus["label"], "median": versus.get("median"), "ci95": versus.get("ci95"),
                    "rounds": versus.get("rounds"), "servers": self.ab.servers, "figure": self.figure}
        return Finding(Check(cid, "speed", INFO, f"interleaved A/B: {words}", lines, evidence), {"speed": speed})
