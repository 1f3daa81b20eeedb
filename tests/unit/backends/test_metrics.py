"""/metrics through prometheus_client's parser: sums over labels, per-label rows, each engine's counters."""

from oracle.backends import Counters
from oracle.backends.metrics import Metrics


def test_prometheus_sums_labelled_samples_and_deltas():
    text = ('# HELP x\nllamacpp:prompt_tokens_cached_total 5\n'
            'vllm:prefix_cache_hits_total{model="a"} 3\nvllm:prefix_cache_hits_total{model="b"} 4\n')
    m = Metrics.parse(text)
    assert m.totals["llamacpp:prompt_tokens_cached_total"] == 5 and m.totals["vllm:prefix_cache_hits_total"] == 7
    d = Counters(prompt_tokens_cached=9).delta(Counters(prompt_tokens_cached=5))
    assert d.prompt_tokens_cached == 4 and d.drafts is None


def test_each_engine_maps_its_own_counter_names():
    llama = Metrics.parse("# TYPE llamacpp:prompt_tokens_cached_total counter\nllamacpp:prompt_tokens_cached_total 12\n"
                          "llamacpp:requests_processing 3\n")
    assert llama.counters() == Counters(prompt_tokens_cached=12.0) and llama.running() == 3
    vllm = Metrics.parse('vllm:prefix_cache_queries_total{engine="0"} 40\nvllm:num_requests_running{engine="0"} 2\n'
                         'vllm:spec_decode_num_drafts_total{engine="0"} 6\n')
    assert vllm.counters() == Counters(prefix_cache_queries=40.0, drafts=6.0)
    assert vllm.running() == 2 and vllm.speculative()


def test_other_servers_metrics_give_no_counters_and_garbage_gives_nothing():
    assert Metrics.parse("http_requests_total 7\n").counters() == Counters()
    assert Metrics.parse("<html>not metrics</html>").totals == {}


def test_each_engine_counts_its_generated_tokens():
    """The speed card's counter evidence: llama.cpp's tokens_predicted_total, vLLM's generation_tokens_total (as
    each prints them, with their TYPE lines), and the delta around a run."""
    llama = Metrics.parse("# HELP llamacpp:tokens_predicted_total Number of generation tokens processed\n"
                          "# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total 104\n"
                          "# TYPE llamacpp:tokens_predicted_seconds_total counter\n"
                          "llamacpp:tokens_predicted_seconds_total 19.9\n")
    assert llama.counters().tokens_generated == 104.0
    vllm = Metrics.parse('# TYPE vllm:generation_tokens_total counter\n'
                         'vllm:generation_tokens_total{engine="0",model_name="m"} 300.0\n'
                         'vllm:generation_tokens_created{engine="0",model_name="m"} 1.7e9\n')
    assert vllm.counters().tokens_generated == 300.0
    after = Counters(tokens_generated=1248.0)
    assert after.delta(Counters(tokens_generated=104.0)).tokens_generated == 1144.0
    assert after.delta(Counters()).tokens_generated is None  # not read before: no delta, never a guess
