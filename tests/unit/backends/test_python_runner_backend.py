"""The python family's backend without a runtime: runners loaded or refused naming the runner, logits of the wrong
shape refused, teacher forcing and prefill scoring (one call, chunks, a last-position-only runner) over a toy model
(tests/helpers/toy_runner.py). Generation end to end is tests/servers/test_python_runner.py's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from oracle.backends import RequestFailed, make_in_process_backend, parse_backend
from oracle.backends.python_runner import PythonRunnerBackend, RunnerLoadError, load_runner

TOY = Path(__file__).resolve().parents[2] / "helpers" / "toy_runner.py"


def _backend(tmp_path, factory: str = "toy") -> PythonRunnerBackend:
    (tmp_path / "config.json").write_text('{"max_position_embeddings": 2048}')  # no tokenizer needed here
    return make_in_process_backend(f"python:{TOY}:{factory}", tmp_path)


def test_the_locator_is_what_follows_python_colon():
    assert parse_backend(f"python:{TOY}:toy") == ("python", "", f"{TOY}:toy")
    with pytest.raises(ValueError, match="needs python:MODULE:FACTORY"):
        parse_backend("python")


@pytest.mark.parametrize("locator, words", [
    ("nowhere/runner.py:make", "no such file nowhere/runner.py"),
    ("no_such_module_here:make", "importing no_such_module_here failed: ModuleNotFoundError"),
    (f"{TOY}:absent", "has no callable 'absent'"),
    (f"{TOY}:factory_fails", "factory_fails() raised RuntimeError: no npu device here"),
    ("json:loads", "loads() raised TypeError"),
    ("fractions:Fraction", "returned Fraction, which lacks reset(), prefill(), step(), vocab_size (int)"),
])
def test_a_runner_that_cannot_load_is_refused_naming_it(locator, words):
    with pytest.raises(RunnerLoadError) as err:
        load_runner(locator)
    assert f"runner {locator}" in str(err.value) and words in str(err.value)


def test_runner_args_reach_the_factory_as_keywords():
    with pytest.raises(RunnerLoadError, match=r"factory_fails\(device='xpu'\) raised RuntimeError: no xpu device"):
        load_runner(f"{TOY}:factory_fails", (("device", "xpu"),))


def test_wrong_sized_logits_and_a_raising_runner_fail_the_request_naming_the_runner(tmp_path):
    short = _backend(tmp_path, "wrong_size")
    with pytest.raises(RequestFailed, match=r"wrong_size: step\(\) returned logits of shape \(49151,\); expected "
                                             r"\(49152,\) \(vocab_size 49152\)"):
        short.teacher_forced([1, 2, 3], [4, 5, 6], logprobs=5)
    raising = _backend(tmp_path, "raises_on_second_prompt")
    raising.teacher_forced([1, 2], [3, 4], logprobs=5)
    with pytest.raises(RequestFailed, match="raises_on_second_prompt: prefill\\(\\) raised RuntimeError: device lost"):
        raising.teacher_forced([1, 2], [3, 4], logprobs=5)


@pytest.mark.parametrize("factory, words", [
    ("string_logits", r"string_logits: step\(\) returned list \['.*, which is no array of numbers \(dtype <U.*\); "
                      r"return the logits as floats of shape \(49152,\)"),
    ("exits_on_step", r"exits_on_step: step\(\) raised SystemExit: 3"),
])
def test_string_logits_and_a_runner_that_exits_fail_the_request_naming_the_runner(tmp_path, factory, words):
    with pytest.raises(RequestFailed, match=words):
        _backend(tmp_path, factory).teacher_forced([1, 2, 3], [4, 5, 6], logprobs=5)


def test_teacher_forcing_and_prefill_scoring_agree_on_a_model_that_does_not_care_how_it_is_fed(tmp_path):
    backend = _backend(tmp_path)
    prompt, completion = [11, 12, 13, 14, 15], [21, 22, 23, 24, 25, 26]
    forced = backend.teacher_forced(prompt, completion, logprobs=8)
    one = backend.prefill_forced(prompt, completion, logprobs=8)
    chunked = backend.prefill_forced(prompt, completion, logprobs=8, chunk=3, positions=[1, 4, 5])
    assert forced.top_ids == one.top_ids and np.allclose(forced.top_logprobs, one.top_logprobs)
    assert chunked.top_ids == [one.top_ids[i] for i in (1, 4, 5)] and "chunks of 3" in chunked.method
    assert backend.prefill_chunking(7) is None and backend.served_context() == 2048
    lps = np.asarray(one.top_logprobs[0])
    assert (np.diff(lps) <= 0).all() and np.exp(lps).sum() < 1.0  # sorted, a strict part of the distribution


def test_a_chunk_that_moves_the_top_token_shows_in_prefill_scoring(tmp_path):
    backend = _backend(tmp_path, "chunk_drift")
    one = backend.prefill_forced([1, 2, 3, 4], [5, 6, 7], logprobs=3)
    chunked = backend.prefill_forced([1, 2, 3, 4], [5, 6, 7], logprobs=3, chunk=2)
    assert one.top_ids[2][0] != 7 and chunked.top_ids[2][0] == 7


def test_a_last_position_runner_is_fed_one_prefix_per_position(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    backend = PythonRunnerBackend(tmp_path, locator=f"{TOY}:last_only")
    scored = backend.prefill_forced([1, 2], [3, 4, 5], logprobs=4)
    forced = backend.teacher_forced([1, 2], [3, 4, 5], logprobs=4)
    assert scored.requests == 3 and scored.top_ids == forced.top_ids
    assert backend._prompt_logprobs([1, 2, 3], None) == pytest.approx(
        [float(np.log(np.exp(r[t]) / np.exp(r).sum())) for r, t in (([1, 0, 1, 1], 2), ([2, 0, 1, 0], 3 % 4))])


def test_the_whole_vocabulary_keeps_each_rows_logit_shift_so_the_raw_logits_can_be_rebuilt(tmp_path):
    """raw logit = logprob + shift, per row, only where the top-k is the whole vocabulary (else nothing kept)."""
    backend = _backend(tmp_path)
    path = [11, 12, 13, 14]
    whole = backend.teacher_forced(path[:2], path[2:], logprobs=backend.vocab_size())
    backend.runner.reset()
    raw = backend.runner.prefill(path[:3], 0)[-1]  # the toy's own row after path[:3]: teacher-forced position 1
    row = dict(zip(whole.top_ids[1], whole.top_logprobs[1]))
    rebuilt = np.array([row[i] for i in range(backend.vocab_size())]) + whole.logit_shift[1]
    assert len(whole.logit_shift) == 2 and np.allclose(rebuilt, raw, atol=1e-5)
    assert backend.teacher_forced(path[:2], path[2:], logprobs=20).logit_shift == []
