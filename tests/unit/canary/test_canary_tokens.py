"""Canaries compared token for token with the reference's completion: the suite's verdicts (exact, near-tie,
divergent), a needle named by its length, depth and the split's position; no completion in the reference: not
compared, with the re-record command."""

from pathlib import Path

from oracle.canary.report import html, markdown_lines
from oracle.canary.results import canary_summary
from oracle.canary.tokens import NOT_COMPARED_HEAD, compare_canary
from oracle.compare.verdicts import passed
from oracle.store.records import Condition, Record
from oracle.store.reference import write_reference

NEEDLE = {"family": "needle", "ok": True, "length": 512, "depth": 50, "verdict": "pass"}


def kept(ids, top=None):
    return {"completion_ids": ids, "finish_reason": "length", "text": "", "logprobs": [-0.1] * len(ids),
            "top_ids": top or [[i, i + 1] for i in ids], "top_logprobs": [[-0.1, -0.3] for _ in ids],
            "ids_source": "server"}


def reference(tmp_path: Path, ids):
    ref = Record(id="needle[512-d50]", condition=Condition(), prompt_ids=[], **kept(ids))
    return write_reference(tmp_path / "ref", [], kind="mtp0", identity={}, run={},
                           blocks={"canaries": {"needle[512-d50]": dict(NEEDLE)}},
                           side_records={"canaries": [ref]})


def test_the_same_tokens_are_exact(tmp_path):
    found = compare_canary("needle[512-d50]", NEEDLE, kept([5, 6, 7]), reference(tmp_path, [5, 6, 7]),
                           near_tie_nats=0.5)
    assert (found.check.id, found.check.kind, found.check.verdict) == ("needle[512-d50]:tokens", "canary-tokens",
                                                                       "exact")
    assert found.row["verdict"] == "exact" and found.note is None


def test_a_right_needle_with_another_token_is_divergent_at_its_length_and_position(tmp_path):
    found = compare_canary("needle[512-d50]", NEEDLE, kept([5, 6, 99]), reference(tmp_path, [5, 6, 7]),
                           near_tie_nats=0.5)
    assert found.check.verdict == "divergent"
    assert (found.row["first_divergence"], found.row["length"], found.row["depth"]) == (2, 512, 50)
    assert found.check.detail.startswith("the 512-token needle at depth 50% answered right with other tokens than "
                                         "the reference: first split at completion token 2 of 3 (reference 7, "
                                         "got 99)")
    rows = {"needle[512-d50]": {**NEEDLE, "tokens_vs_reference": found.row}}
    assert canary_summary(rows) == "needle 1/1, tokens vs reference 1 divergent"
    assert markdown_lines(rows)[1] == f"  - needle[512-d50]:tokens: divergent: {found.check.detail}"
    assert "<td class='divergent'>divergent: the 512-token needle" in html({"canaries": rows})


def test_a_split_within_the_margin_is_a_near_tie(tmp_path):
    # the reference's top-2 at position 2 is (7, 8) at -0.1 and -0.3 nats: 8 is 0.2 nats away
    found = compare_canary("needle[512-d50]", NEEDLE, kept([5, 6, 8], top=[[5, 6], [6, 7], [8, 7]]),
                           reference(tmp_path, [5, 6, 7]), near_tie_nats=0.5)
    assert found.check.verdict == "near-tie" and round(found.row["margin_nats"], 3) == 0.2
    # the verdict table: a near-tie fails unless --allow-near-ties; a divergent canary fails either way
    assert [passed(found.check, allow_near_ties=allow, allow_inconclusive=()) for allow in (False, True)] == [
        False, True]
    moved = compare_canary("needle[512-d50]", NEEDLE, kept([5, 6, 99]), reference(tmp_path / "b", [5, 6, 7]),
                           near_tie_nats=0.5)
    assert not passed(moved.check, allow_near_ties=True, allow_inconclusive=("canary", "canary-tokens"))


def test_a_reference_without_the_canarys_completion_is_not_compared(tmp_path):
    ref = reference(tmp_path, [5, 6, 7])
    found = compare_canary("needle[1024-d50]", dict(NEEDLE, length=1024), kept([5]), ref, near_tie_nats=0.5)
    assert found.check is None and found.row["verdict"] == "not-compared"
    head, item = found.note
    assert item == "needle[1024-d50]" and head.startswith(NOT_COMPARED_HEAD)
    assert f"--record {ref.path} --record-overwrite" in head
    ref.manifest["schema_version"] = 1  # as one written before canary completions were kept
    found = compare_canary("needle[512-d50]", NEEDLE, kept([5]), ref, near_tie_nats=0.5)
    assert found.check is None and "recorded before oracle kept canary completions" in found.note[0]


def test_no_reference_and_canaries_of_no_completion_say_nothing(tmp_path):
    assert compare_canary("needle[512-d50]", NEEDLE, kept([5]), None, near_tie_nats=0.5).row is None
    crosstalk = {"family": "crosstalk", "ok": True}
    assert compare_canary("crosstalk[c2]", crosstalk, kept([5]), reference(tmp_path, [5]), near_tie_nats=0.5).row \
        is None
