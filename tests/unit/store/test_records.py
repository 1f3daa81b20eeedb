"""Records: the typed key and its one written form, a record made from a completion field for field."""

from oracle.backends import Completion
from oracle.store.records import PRIMARY, REPEAT, Condition, Record, RecordKey


def test_record_key_round_trips_through_its_written_form():
    for key in (RecordKey("code-hashmap", PRIMARY), RecordKey("code-hashmap~3", Condition(concurrency=8)),
                RecordKey("p", REPEAT, "server2")):
        assert RecordKey.parse(str(key)) == key
    assert str(RecordKey("p~1", Condition(concurrency=4), "server1")) == "p~1@boot1-c4@server1"
    assert RecordKey("p~1", PRIMARY).prompt == "p" and RecordKey("p", PRIMARY).on("server2").server == "server2"


def test_record_key_of_a_saved_meta_is_the_records_own():
    rec = Record(id="p", condition=Condition(concurrency=8), prompt_ids=[1], completion_ids=[2], finish_reason="stop",
                 repeat=5)
    assert RecordKey.of_meta(rec.meta()) == rec.report_key == RecordKey("p~5", Condition(concurrency=8))


def test_a_record_takes_every_field_it_shares_with_the_completion():
    c = Completion(completion_ids=[5, 6], finish_reason="length", text="ab", logprobs=[-0.1, -0.2],
                   top_ids=[[5], [6]], top_logprobs=[[-0.1], [-0.2]], prompt_ids=[9, 9, 9], cached_prompt_tokens=0,
                   drafted=4, accepted=3, ttft_s=0.5, token_times_s=[0.5, 0.6], ids_source="server",
                   system_fingerprint="fp", tail_mass=[0.01, 0.02])
    rec = Record.from_completion("p", [1, 2], REPEAT, c, started_at=1.0, finished_at=2.0, repeat=0)
    assert rec.prompt_ids == [1, 2]  # what was sent, not what the server echoed
    assert (rec.completion_ids, rec.finish_reason, rec.text, rec.logprobs, rec.top_ids, rec.top_logprobs,
            rec.cached_prompt_tokens, rec.drafted, rec.accepted, rec.ttft_s, rec.token_times_s, rec.tail_mass) == \
        ([5, 6], "length", "ab", [-0.1, -0.2], [[5], [6]], [[-0.1], [-0.2]], 0, 4, 3, 0.5, [0.5, 0.6], [0.01, 0.02])
    assert (rec.condition, rec.started_at, rec.finished_at) == (REPEAT, 1.0, 2.0)
