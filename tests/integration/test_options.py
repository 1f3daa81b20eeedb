"""Bad options are usage errors before any request, each naming the fix (no server needed)."""

import pytest


@pytest.mark.parametrize("args, message", [
    (["--backend=tgi"], "*unknown family 'tgi'; known families: hf, llamacpp, openai, vllm*"),
    (["--backend=llamacpp", "--url=http://a:1", "--launch=x"], "*--url/--servers and --launch both given*"),
    (["--backend=llamacpp", "--logprobs=0"], "*--logprobs '0': must be at least 1*"),
    (["--backend=llamacpp", "--logprobs=many"], "*expected a positive integer*"),
    (["--backend=llamacpp", "--allow-inconclusive=cache,weather"], "*unknown kind 'weather'; known kinds: *"),
    (["--backend=llamacpp", "--near-tie-nats=-1"], "*must be between 0 and 50 nats*"),
    (["--backend=llamacpp", "--reference-kind=fp8"], "*must be mtp0 (target only) or f16*"),
    (["--backend=llamacpp", "--url=127.0.0.1:8080"], "*must start with http://*"),
    (["--backend=llamacpp", "--url=http://127.0.0.1:1", "--server-args=-np 2"], "*configure the embedded default*"),
    (["--backend=llamacpp", "--model=/nonexistent.gguf"], "*no such file; give the path of a GGUF*"),
    (["--backend=llamacpp", "--suite=nope"], "*built-in suites: default*"),
    (["--backend=llamacpp", "--reference=missing"], "*record one first with*"),
    (["--backend=llamacpp", "--launch=serve 'unclosed"], "*check the quotes*"),
    (["--backend=hf-cpu", "--url=http://127.0.0.1:1"], "*runs the model in this process: give --model*"),
    (["--backend=hf-cpu", "--ladder=1,2"], "*has no server: --boots, --ladder and --server-args*"),
    (["--backend=hf-cpu", "--model=/nonexistent"], "*no such file or folder; give a GGUF or a Hugging Face*"),
    (["--backend=hf-cpu", "--dtype=fp8"], "*--dtype 'fp8': must be one of float32, float16, bfloat16*"),
    (["--backend=hf-cpu", "--floor-dtype=int4"], "*--floor-dtype 'int4': must be one of*, or none*"),
    (["--backend=llamacpp", "--kld-max=lots"], "*expected a Mean KLD in nats, e.g. --kld-max 0.05*"),
    (["--backend=llamacpp", "--same-top1-min=101"], "*must be a percentage between 0 and 100*"),
])
def test_usage_errors_name_the_fix(pytester, args, message):
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_without_backend_the_plugin_stays_out_of_the_way(pytester):
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_record_onto_a_non_empty_folder_is_refused_before_starting(pytester):
    (pytester.path / "ref").mkdir()
    (pytester.path / "ref" / "keep.txt").write_text("mine")
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--url=http://127.0.0.1:9",
                                "--record=ref")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*a non-empty folder is already there and was left untouched*"])
    assert (pytester.path / "ref" / "keep.txt").read_text() == "mine"


def test_unreachable_url_says_start_it_first(pytester):
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--url=http://127.0.0.1:9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*does not answer its health check; start it first*"])


def test_gate_items_are_collected_from_the_suite_alone(pytester):
    """--collect-only names every item without a server (what xdist workers rely on)."""
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--url=http://127.0.0.1:9",
                                "--collect-only", "-q")
    result.stdout.fnmatch_lines(["oracle::run[[]code-palindrome[]]", "*oracle::cache-zero"])
    assert result.ret == 0
