"""The neighbours' producer, `neighbours[N]`: each suite prompt sent with an unrelated request of N prompt tokens
beside it (the neighbour sent once the prompt has streamed its first token, so its prefill runs beside the
prompt's decode), the prompt's complete token array compared with its c1 record (and the reference), the overlap
of each pair proven from the answers' token times.

    checks = NeighbourChecks(plan, recorder, prompts, state, served)
    checks.neighbour_check(9).report["neighbours"]["9"]["overlap"]   # {"code-palindrome": 2, ...}
"""

from __future__ import annotations

from oracle.checks.descriptor import Finding, not_run
from oracle.checks.neighbours.prompt import NEIGHBOUR_MAX_TOKENS, neighbour_id, neighbour_prompt
from oracle.compare.conditions import compare_condition, condition_check, first_split
from oracle.compare.verdicts import DIVERGENT, DROPPED, EXACT, INCONCLUSIVE, LOGPROBS_MOVED, Check
from oracle.compare.width_map import outputs_of
from oracle.run.runner import one_at_a_time
from oracle.store.records import PRIMARY, Condition, Record

__all__ = ["NeighbourChecks", "neighbour_condition"]

KIND = "neighbours"


def neighbour_condition(length: int) -> Condition:
    """boot1-c2-n<length>: two requests in flight, the second an unrelated one of `length` prompt tokens."""
    return Condition(boot=1, concurrency=2, neighbour=length)


class NeighbourChecks:
    def __init__(self, plan, recorder, prompts, state, served=None) -> None:
        self.plan, self.recorder, self.prompts, self.state = plan, recorder, prompts, state
        self.served = served  # oracle.run.served_context.ServedContext (None: not read)

    def _references(self) -> dict[str, Record] | None:
        # As for the ladder: against an f16 reference (or the distribution check) only c1 is the oracle.
        if self.plan.reference is None or self.plan.f16_gate or self.plan.distribution_gate:
            return None
        return {p.id: self.plan.reference.record(p.id) for p in self.prompts.rendered}

    def _dropped(self, cid: str, length: int) -> Finding | None:
        """A neighbour longer than the server holds is not sent: dropped, passed, and said (as the needles)."""
        context = self.served.tokens if self.served is not None else None
        if context is None or length + NEIGHBOUR_MAX_TOKENS <= context:
            return None
        detail = (f"neighbour of {length} tokens not sent: with its {NEIGHBOUR_MAX_TOKENS} answer tokens it "
                  f"exceeds the server's context of {context} tokens ({self.served.source}); drop {length} from "
                  "--neighbours or give the server more context")
        return Finding(Check(cid, KIND, DROPPED, detail),
                       {"neighbours": {str(length): {"verdict": DROPPED, "detail": detail}}})

    def neighbour_check(self, length: int) -> Finding:
        cid = f"neighbours[{length}]"
        if not self.state.complete or self.state.interruption:
            return not_run(self.state, cid, KIND)
        if (dropped := self._dropped(cid, length)) is not None:
            return dropped
        missing = [p for p in self.prompts.rendered if p.id not in self.recorder.records]
        if missing and self.recorder.run(PRIMARY, one_at_a_time(missing)) is None:  # c1 of other servers' prompts
            return not_run(self.state, cid, KIND)
        neighbour = neighbour_prompt(length, self.prompts.rendered)
        waves = [[(p, 0), (neighbour, 0)] for p in self.prompts.rendered]
        result = self.recorder.run(neighbour_condition(length), waves, staggered=True,
                                   keep=lambda record: record.id != neighbour.id)
        if result is None:
            return not_run(self.state, cid, KIND)
        records = [r for r in result.records if r.id != neighbour_id(length)]
        overlap = {p.id: reached for p, reached in zip(self.prompts.rendered, result.wave_overlap)}
        rows = compare_condition(records, self.recorder.records, self._references(), self.plan.envelope,
                                 near_tie_nats=self.plan.options.near_tie_nats,
                                 sampled=self.plan.options.sampling is not None,
                                 logprobs=self.plan.options.compare == "logprobs")
        label = f"beside a {length}-token neighbour"
        check = condition_check(cid, KIND, label, rows, required=len(rows), recording=self.plan.mode == "record")
        check.lines = [_split_line(row, length) for row in rows if row["verdict"] != EXACT][:16]
        alone = [pid for pid, reached in overlap.items() if reached < 2]
        check.evidence["overlap"] = overlap
        if alone:
            check.detail += f"; {len(alone)} of {len(overlap)} neighbours did not overlap the prompt's decode"
            if check.verdict != DIVERGENT:
                check.verdict, check.inconclusive_kind = INCONCLUSIVE, "overlap"
                check.lines.insert(0, _unproven(length, alone))
        row = {"verdict": check.verdict, "detail": check.detail, "counts": check.evidence["counts"],
               "records": len(rows), "overlap": overlap, "wall_s": round(result.wall_s, 3),
               "splits": [{"prompt": r["prompt"], "position": first_split(r), "verdict": r["verdict"]}
                          for r in rows if r["verdict"] != EXACT]}
        row["exact_vs_c1"] = sum(r["vs_c1"]["verdict"] == EXACT for r in rows)
        row |= outputs_of(rows, near_tie_nats=self.plan.options.near_tie_nats)  # its class in the width map's picture
        return Finding(check, {"neighbours": {str(length): row},
                               "runs": [result.log_row(neighbour=length, overlap=overlap)]})


def _split_line(row: dict, length: int) -> str:
    """`code-palindrome beside a 9-token neighbour: divergent at token 3 vs c1`."""
    parts = []
    for name, side in (("c1", row["vs_c1"]), ("the reference", row["vs_reference"])):
        if side is None or side["verdict"] == EXACT:
            continue
        if side["verdict"] == LOGPROBS_MOVED:  # tokens equal (--oracle-compare logprobs): no position of a split
            parts.append(f"vs {name}: {side['reason']}")
            continue
        where = f"token {side['first_divergence']}" if side["first_divergence"] is not None else "finish reason"
        parts.append(f"{side['verdict']} at {where} vs {name}")
    return f"{row['prompt']} beside a {length}-token neighbour: " + "; ".join(parts)


def _unproven(length: int, alone: list[str]) -> str:
    return (f"the {length}-token neighbour did not generate while {', '.join(alone[:4])}"
            f"{' ...' if len(alone) > 4 else ''} decoded: the neighbour was not proven to run beside the prompt "
            "(give the server two slots or more: llama-server -np 2, vllm serve --max-num-seqs 2)")
