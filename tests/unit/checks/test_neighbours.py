"""--neighbours: its values, the neighbour's prompt, its condition key and its price in the run plan; pure, fast."""

from __future__ import annotations

import pytest

from oracle.checks.descriptor import PlanContext
from oracle.checks.neighbours import CHECK
from oracle.checks.neighbours.options import neighbour_lengths
from oracle.checks.neighbours.producer import neighbour_condition
from oracle.checks.neighbours.prompt import NEIGHBOUR_MAX_TOKENS, neighbour_prompt
from oracle.run.prompting import RenderedPrompt
from oracle.run.suite import Prompt
from oracle.store.records import Condition


def rendered(pid: str, ids) -> RenderedPrompt:
    return RenderedPrompt(prompt=Prompt(id=pid, klass="chat", messages=(), max_tokens=4), text=pid, ids=tuple(ids))


def test_lengths_are_sorted_once_each():
    assert neighbour_lengths("512, 9,10,1,9") == (1, 9, 10, 512)


@pytest.mark.parametrize("value, says", [
    ("", "give at least one neighbour prompt length"), (",", "give at least one"),
    ("0,9", "0 is out of range (1..1048576 tokens)"), ("-3", "-3 is out of range"),
    ("9,ten", "'ten' is not a whole number of tokens"), ("1.5", "'1.5' is not a whole number"),
    ("99999999", "99999999 is out of range")])
def test_bad_lengths_are_usage_errors_naming_the_fix(value, says):
    with pytest.raises(pytest.UsageError, match="--neighbours") as raised:
        neighbour_lengths(value)
    assert says in str(raised.value) and "e.g. --neighbours 1,9,10,64,512" in str(raised.value)


def test_the_neighbour_prompt_has_its_length_in_suite_ids_and_is_the_same_every_time():
    suite = [rendered("a", [101, 102, 103]), rendered("b", [103, 200])]
    nine = neighbour_prompt(9, suite)
    assert len(nine.ids) == 9 and set(nine.ids) <= {101, 102, 103, 200}
    assert nine.ids == neighbour_prompt(9, suite).ids and nine.id == "neighbour-9"
    assert nine.prompt.max_tokens == NEIGHBOUR_MAX_TOKENS


def test_the_condition_key_names_the_neighbour_and_reads_back():
    condition = neighbour_condition(9)
    assert condition.key == "boot1-c2-n9" and Condition.from_key("boot1-c2-n9") == condition
    assert Condition.from_key("boot1-c1-r2") == Condition(run=2)


def test_the_run_plan_prices_each_prompt_with_its_neighbour():
    part = CHECK.plan_part("neighbour", 64, PlanContext(suite=((30, 16), (40, 8)), options=None, reference=False))
    assert part.name == "neighbours 64"
    assert part.shapes == ((30, 16), (64, NEIGHBOUR_MAX_TOKENS), (40, 8), (64, NEIGHBOUR_MAX_TOKENS))


def test_a_split_line_names_the_length_and_position_and_a_moved_logprob_says_so():
    from oracle.checks.neighbours.producer import _split_line

    side = {"verdict": "divergent", "first_divergence": 3}
    moved = {"verdict": "logprobs-moved", "first_divergence": None, "reason": "logprobs moved at 1 of 40 values"}
    assert _split_line({"prompt": "p", "vs_c1": side, "vs_reference": None}, 9) == \
        "p beside a 9-token neighbour: divergent at token 3 vs c1"
    assert _split_line({"prompt": "p", "vs_c1": moved, "vs_reference": {"verdict": "exact"}}, 9) == \
        "p beside a 9-token neighbour: vs c1: logprobs moved at 1 of 40 values"
