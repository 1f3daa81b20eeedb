"""The speed card of the primary run, its comparison with the reference, and the `speed` item (--min-speedup).
Producers return findings and never write the report.

    speed = SpeedChecks(plan, state)
    watch = speed.watch(backend); watch.start(); ...the primary run...; watch.close()   # --oracle-power: meters, isolation
    findings = watch.findings(result, warmup_row)                 # identity.json's `speed`: the card
    speed.speed_check().check.verdict                              # pass / fail / inconclusive
"""

from __future__ import annotations

from oracle.backends.base import IDS_FROM_TEXT
from oracle.compare.evidence import cache_zero_check
from oracle.compare.verdicts import INCONCLUSIVE, PASS, Check
from oracle.checks.descriptor import Finding, not_run
from oracle.speed.sequential import path_words
from oracle.speed.credible import counters_of, credibility
from oracle.speed.figures import BYTES_ARRIVAL
from oracle.speed.card import prompt_rows, reference_card, speed_card
from oracle.speed.launch_match import launch_match
from oracle.speed.power import PowerWindow
from oracle.speed.validity import HEADLINE, diagnostics, history_speculation
from oracle.speed.verdict import speed_verdict
from oracle.speed.versus import compare_cards, hardware

__all__ = ["CardWatch", "SpeedChecks"]


class CardWatch:
    """The speed card's watch of the primary run (`RunWatch`): its power and isolation window around the run, then
    the card made from the run's records."""

    def __init__(self, speed: "SpeedChecks", backend) -> None:
        self.speed, self.backend = speed, backend
        self.window = speed.window(backend)

    def start(self) -> None:
        self.window.start()

    def close(self) -> None:
        self.window.close()

    def findings(self, result, warmup: dict) -> dict:
        return {"speed": self.speed.card_findings(result, warmup, self.backend, self.window)}


class SpeedChecks:
    def __init__(self, plan, state) -> None:
        self.plan, self.state = plan, state

    def watch(self, backend) -> CardWatch:
        return CardWatch(self, backend)

    def window(self, backend) -> PowerWindow:
        """The primary run's power and isolation window (--oracle-power): the meters for the run's device, unstarted."""
        return PowerWindow.open(self.plan.options.check("speed").power, self.state.identity, url=backend.base_url,
                                in_process=backend.capabilities.in_process)

    def card_findings(self, result, warmup: dict, backend, window: PowerWindow | None = None) -> dict:
        """The candidate's card from the primary run, and its comparison with the reference when there is one."""
        records = result.records
        power = isolation = None
        if window is not None:
            power, isolation = window.stop(generated_tokens=sum(len(r.completion_ids) for r in records))
        if backend.capabilities.in_process:
            cache_verdict = PASS  # no server, a fresh KV cache per request
        else:
            cache_verdict = cache_zero_check(records, result.counters_delta, check_id="speed",
                                             cache=backend.capabilities.cache).verdict
        ident = self.state.identity
        server_says = backend.speculative_config()
        history = history_speculation(("the launch command", ident.get("launch_command")),
                                      ("--server-args", ident.get("server_args")),
                                      ("the server's speculative settings", server_says))
        drafted = any(r.drafted for r in records)
        if not history and (server_says or drafted) and not (ident.get("launch_command") or ident.get("server_args")):
            history = (f"speculative decoding is on ({server_says or 'draft counts in the responses'}) but its method "
                       "is unknown: the server was given by --oracle-url, so oracle cannot see its flags and history-based "
                       "(n-gram) speculation cannot be ruled out; gate it with --launch CMD for a headline")
        reasons = diagnostics(cache_verdict=cache_verdict, warmup_requests=warmup.get("requests", 0),
                              history=history, text_only=sum(r.ids_source == IDS_FROM_TEXT for r in records))
        rows = prompt_rows(records)
        credible = credibility(rows, **counters_of(result, backend))
        card = speed_card(rows, reasons=reasons, clock=BYTES_ARRIVAL, warmup=warmup, credible=credible,
                          isolation=isolation, power=power)
        reference = self.plan.reference
        if reference is not None:
            ref_card, missing = reference_card(reference, [r.id for r in records])
            ref_ident = reference.manifest.get("identity") or {}
            card["vs_reference"] = compare_cards(card, ref_card, candidate_hw=hardware(ident),
                                                 reference_hw=hardware(ref_ident), reference_missing=missing,
                                                 launch=launch_match(ident.get("launch_command"),
                                                                     ref_ident.get("launch_command")))
            if ref_card is not None:
                card["reference"] = {k: ref_card.get(k) for k in ("label", "reasons", "token_times", "summary",
                                                                  "credible", "isolation", "power")}
        return card

    def speed_check(self) -> Finding:
        """--min-speedup X: interleaved, the sequential test's decision (its LLR path in the lines); else pass when
        the interval's lower bound is >= X, fail when its upper bound is < X, else inconclusive (kind speed), as when the point is within the noise band around X, either card is not a
        headline or the runs are not comparable (`speed/noise.py`)."""
        settings = self.plan.options.check("speed")
        cid, bar = "speed", settings.min_speedup
        card = self.state.states["speed"].card
        if not self.state.complete or card is None or self.state.interruption:
            return not_run(self.state, cid, "speed")
        versus = card.get("vs_reference") or {}
        verdict, said, evidence = speed_verdict(card, bar, settings.noise_floor)
        if verdict == INCONCLUSIVE and versus.get("label") != HEADLINE:
            lines = [f"  {r}" for r in (versus.get("reasons") or [])[1:]]
        else:  # the sequential test's LLR path by round, in the terminal as in the report
            lines = [f"  {path_words(versus['sequential'])}"] if versus.get("sequential") else []
        return Finding(Check(cid, "speed", verdict, said, lines, evidence))
