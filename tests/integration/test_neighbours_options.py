"""--neighbours, --oracle-compare and --allow-logprobs-moved: bad values are usage errors (exit 4) naming the fix,
before any request (no server needed)."""

import pytest


@pytest.mark.parametrize("args, message", [
    (["--neighbours="], "*--neighbours: give at least one neighbour prompt length in tokens, e.g. --neighbours "
                        "1,9,10,64,512*"),
    (["--neighbours=0,9"], "*--neighbours '0,9': 0 is out of range (1..1048576 tokens)*"),
    (["--neighbours=-9"], "*--neighbours '-9': -9 is out of range*"),
    (["--neighbours=9,ten"], "*--neighbours '9,ten': 'ten' is not a whole number of tokens*"),
    (["--neighbours=2.5"], "*--neighbours '2.5': '2.5' is not a whole number of tokens*"),
    (["--oracle-compare=bits"], "*--oracle-compare 'bits': must be tokens (complete token arrays equal) or logprobs*"),
    (["--oracle-compare="], "*--oracle-compare '': must be tokens*"),
    (["--oracle-compare=logprobs", "--temperature=0.7"], "*--oracle-compare logprobs with --temperature: sampled "
                                                         "runs ask for no logprobs by default; give --logprobs N*"),
])
def test_bad_values_are_usage_errors_naming_the_fix(pytester, args, message):
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--oracle-url=http://127.0.0.1:9", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_backend_that_runs_one_request_at_a_time_refuses_neighbours(pytester):
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=hf-cpu", "--oracle-model=.", "--neighbours=9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--backend hf-cpu runs requests one at a time and cannot honour --neighbours*"])


def test_allow_logprobs_moved_takes_no_value(pytester):
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--allow-logprobs-moved=yes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
