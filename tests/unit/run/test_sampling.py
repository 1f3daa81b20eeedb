"""The sampled settings: the suite expanded per seed, the settings as the reference keeps them, the refusal."""

from __future__ import annotations

from oracle.backends.base import CompletionRequest
from oracle.backends.llamacpp import LlamaCppBackend
from oracle.run.sampling import Sampling, prompt_of, settings_refusal
from oracle.run.suite import load_suite


def test_the_suite_is_one_prompt_per_seed_each_with_its_seed():
    suite = load_suite("default").only({"code-hashmap", "code-palindrome"}).with_max_tokens(24)
    sampled = Sampling(0.8, 1.0, (1, 2)).expand(suite)
    assert sampled.ids() == ["code-palindrome~s1", "code-palindrome~s2", "code-hashmap~s1", "code-hashmap~s2"]
    assert [p.seed for p in sampled.prompts] == [1, 2, 1, 2] and {p.max_tokens for p in sampled.prompts} == {24}
    assert sampled.sha256 == suite.sha256 and prompt_of("code-hashmap~s2") == "code-hashmap"


def test_settings_round_trip_and_a_difference_is_refused_naming_both():
    s = Sampling(0.8, 1.0, (1, 2, 3))
    assert s.as_json() == {"temperature": 0.8, "top_p": 1.0, "seeds": [1, 2, 3], "top_k": 0, "min_p": 0.0}
    assert Sampling.from_json(s.as_json()) == s and Sampling.from_json(None) is None
    assert settings_refusal(s, Sampling(0.8, 1.0, (1, 2, 3))) is None
    message = settings_refusal(s, Sampling(0.9, 1.0, (1, 2, 3)))
    assert ("recorded with --temperature 0.8 --top-p 1 --oracle-seed 1 --seeds 3 and this gate asks for --temperature 0.9 "
            "--top-p 1 --oracle-seed 1 --seeds 3") in message
    assert "greedy (no --temperature)" in settings_refusal(None, s)


def test_llama_server_gets_the_stated_settings_and_nothing_else():
    backend = LlamaCppBackend("http://127.0.0.1:9")
    greedy = backend.request_body(CompletionRequest((1, 2), 8, 0, seed=5))
    assert (greedy["temperature"], greedy["top_k"]) == (0.0, 1) and "top_p" not in greedy
    body = backend.request_body(CompletionRequest((1, 2), 8, 0, seed=5, temperature=0.8, top_p=0.95))
    assert {k: body[k] for k in ("temperature", "top_p", "top_k", "min_p", "seed")} == {
        "temperature": 0.8, "top_p": 0.95, "top_k": 0, "min_p": 0.0, "seed": 5}
