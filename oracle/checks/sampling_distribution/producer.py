"""The sampling-distribution check's producer, the `sampling-distribution` item (--sampling-check distribution): the candidate's sampled tokens and the
reference's own samples, both scored under the reference model on the --score-url server (teacher forcing, each
sampled token forced so its own logprob is read), compared by compare/distribution.py. Never writes the report.

    checks = SamplingChecks(plan, recorder, prompts, state)
    checks.distribution_check().check.verdict     # "consistent", "shifted" or "insufficient"
"""

from __future__ import annotations

from oracle.backends import RequestFailed, make_backend
from oracle.checks.descriptor import Finding, not_run
from oracle.checks.sampling_distribution.scorer import PathScorer
from oracle.compare.distribution import ScoredSequence, distribution_check
from oracle.compare.verdicts import INSUFFICIENT, NOT_RUN, Check
from oracle.run.sampling import prompt_of

__all__ = ["SCORE_TOP_K", "SamplingChecks", "power_statement"]

SCORE_TOP_K = 20  # the reference's top-k each sampled token is ranked in


def power_statement(prompts: int, seeds: int, tokens: int, detectable: float | None, alpha: float) -> str:
    """'with 12 prompts x 4 seeds x 256 tokens this run can detect a shift of 0.041 nats/token at 95% ...'."""
    shape = f"with {prompts} prompts x {seeds} seeds x {tokens} tokens"
    if detectable is None:
        return (f"{shape} this run cannot detect any shift at {1 - alpha:.0%}: too few sequences for the permutation "
                "test to reach that level (add prompts or --seeds)")
    return (f"{shape} this run can detect a shift of {detectable:.3f} nats/token in mean per-token log-likelihood "
            f"at {1 - alpha:.0%} with 80% power")


class SamplingChecks:
    def __init__(self, plan, recorder, prompts, state) -> None:
        self.plan, self.recorder, self.prompts, self.state = plan, recorder, prompts, state

    def _scored(self, scorer: PathScorer, record) -> ScoredSequence:
        forced = scorer.scored_path(list(record.prompt_ids), list(record.completion_ids), logprobs=SCORE_TOP_K)
        ranks = tuple(row.index(t) if t in row else -1 for row, t in zip(forced.top_ids, record.completion_ids))
        return ScoredSequence(record.id, tuple(forced.path_logprobs), ranks)

    def distribution_check(self) -> Finding:
        cid = "sampling-distribution"
        if not self.state.complete or self.state.interruption:
            return not_run(self.state, cid, "sampling")
        o, reference, settings = self.plan.options, self.plan.reference, self.plan.options.check("sampling_distribution")
        mine = [self.recorder.records[p.id] for p in self.prompts.rendered if p.id in self.recorder.records]
        scorer = make_backend(o.backend, settings.score_url, timeout_s=o.request_timeout)
        if not isinstance(scorer, PathScorer):
            why = f"the {scorer.family} backend cannot score a sampled path's own tokens"
            return Finding(Check(cid, "sampling", NOT_RUN, f"not run: scoring on --score-url "
                                 f"{settings.score_url} failed ({why}); nothing was retried"))
        try:
            ref_side = [self._scored(scorer, reference.record(r.id)) for r in mine]
            cand_side = [self._scored(scorer, r) for r in mine]
        except RequestFailed as exc:
            return Finding(Check(cid, "sampling", NOT_RUN, f"not run: scoring on --score-url {settings.score_url} failed "
                                 f"({exc}); nothing was retried"))
        result = distribution_check(ref_side, cand_side, max_shift=settings.max_shift, top_k=SCORE_TOP_K)
        data = result.as_json()
        prompts, seeds = len({prompt_of(r.id) for r in mine}), len(o.sampling.seeds)
        tokens = round(sum(len(s.logprobs) for s in cand_side) / max(1, len(cand_side)))
        data["power_statement"] = power_statement(prompts, seeds, tokens, data["detectable_shift"], result.alpha)
        data["scored_by"] = {"url": settings.score_url, "server": scorer.server_identity(), "method": scorer.capabilities.sampling,
                             "top_k": SCORE_TOP_K}
        detail = (f"mean per-token log-likelihood {data['mean_loglik']['candidate']} (candidate) vs "
                  f"{data['mean_loglik']['reference']} (reference), effect {data['effect_nats_per_token']} nats/token "
                  f"(d {data['effect_size_d']}), p {data['p_value_loglik']} (log-likelihood) and "
                  f"{data['p_value_ranks']} (rank histogram) at {result.alpha / 2:g} each; "
                  f"{data['power_statement']} (--max-shift {settings.max_shift:g})")
        lines = [f"rank histogram {data['rank_histogram']['bins']}: reference {data['rank_histogram']['reference']}, "
                 f"candidate {data['rank_histogram']['candidate']}", f"permutations: {result.permutations}"]
        check = Check(cid, "sampling", result.verdict, detail, lines, data)
        if result.verdict == INSUFFICIENT:  # passes only with --allow-inconclusive sampling (compare/verdicts.py)
            check.inconclusive_kind = "sampling"
        return Finding(check, {"sampling": {"distribution": data}})
