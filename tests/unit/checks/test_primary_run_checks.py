"""The primary run's checks (tokens, cache-zero, speculation) as packages: their items say where they run under
pytest -n, their states merge the servers' parts, and the tokens state counts the prompts' verdicts for the
report's summary."""

from types import SimpleNamespace

from oracle.checks import check_named, fresh_states
from oracle.checks.tokens import TokensState
from oracle.compare.verdicts import Check
from oracle.report.state import ReportState


class _Suite:
    def ids(self):
        return ["a", "b"]


def _plan(mode: str = "gate", workers: int = 1, f16_gate: bool = False):
    return SimpleNamespace(mode=mode, f16_gate=f16_gate, suite=_Suite(), options=SimpleNamespace(workers=workers))


def test_each_prompts_item_is_named_by_the_mode_and_dealt_with_the_prompts():
    items = check_named("tokens").items
    assert [(i.name, i.kind, i.key, i.placed) for i in items(_plan())] == [
        ("tokens[a]", "tokens", "a", "prompt"), ("tokens[b]", "tokens", "b", "prompt")]
    assert [i.name for i in items(_plan("record"))] == ["record[a]", "record[b]"]
    assert [i.name for i in items(_plan("run"))] == ["run[a]", "run[b]"]
    assert items(_plan(f16_gate=True)) == []  # against an f16 reference the gate is on logits alone
    assert [i.order for i in items(_plan())] == [(10, 0, 0), (10, 1, 0)]


def test_each_server_proves_its_own_run_under_n():
    for name, item in (("cache_zero", "cache-zero"), ("speculation", "speculation")):
        items = check_named(name).items
        assert [(i.name, i.key, i.placed) for i in items(_plan())] == [(item, None, None)]
        assert [(i.name, i.key, i.placed) for i in items(_plan(workers=2))] == [
            (f"{item}[server1]", 0, "server"), (f"{item}[server2]", 1, "server")]


def test_the_tokens_state_merges_c1_counts_and_keeps_each_condition():
    def part(k, n, **more):
        return TokensState({"token_ids": "returned by the server"},
                           {"c1": {"vs_reference": {"k": k, "n": n, "records": 2, "exact_records": 1}}, **more})

    merged = TokensState.merge(TokensState(), [("server1", part(30, 32, c4={"x": 1})), ("server2", part(2, 32))])
    assert merged.evidence == {"token_ids": "returned by the server"} and merged.token_match["c4"] == {"x": 1}
    c1 = merged.token_match["c1"]["vs_reference"]
    assert (c1["k"], c1["n"], c1["records"], c1["exact_records"]) == (32, 64, 4, 2)
    assert TokensState.merge(TokensState(), [("server1", TokensState())]) == TokensState()


def test_the_summary_counts_the_prompts_verdicts_from_the_tokens_state():
    state = ReportState(mode="gate", backend="llamacpp", prompt_ids=["a", "b", "c"], states=fresh_states())
    state.checks = [Check("tokens[a]", "tokens", "exact", ""), Check("tokens[b]", "tokens", "near-tie", ""),
                    Check("cache-zero", "cache", "inconclusive", "")]
    summary = state.summary()
    assert (summary["exact"], summary["near_tie"], summary["inconclusive"], summary["not_run"]) == ([1, 3], 1, 1, 0)
    assert list(summary)[:3] == ["exact", "logits", "near_tie"]  # identity.json's order
    recorded = ReportState(mode="record", backend="llamacpp", prompt_ids=["a"], states=fresh_states())
    recorded.checks = [Check("record[a]", "record", "pass", "")]
    assert recorded.summary()["exact"] == [0, 0]  # a record run judges no tokens
