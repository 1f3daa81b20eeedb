import oracle
from oracle.store.identity import filtered_environment
from oracle.targets.launched import redact_command


PUBLIC_API = [
    "Backend", "Check", "Completion", "CompletionRequest", "Condition", "Counters", "Prompt", "Record",
    "Reference", "ReferenceError", "RequestFailed", "Suite", "SuiteError", "TokenComparison", "TokenSide",
    "cache_zero_check", "compare_tokens", "first_divergence", "load_record", "load_reference", "load_suite",
    "make_backend", "parse_backend", "save_record", "speculation_check", "speculation_summary", "write_reference",
]


def test_public_api_is_sorted_and_importable():
    assert oracle.__all__ == PUBLIC_API  # sorted, and exactly these names
    for name in oracle.__all__:
        obj = getattr(oracle, name)
        # Each name is the class or function of that name from an oracle module (not a stand-in or a re-binding).
        assert obj.__name__ == name and obj.__module__.startswith("oracle."), (name, obj)
    assert issubclass(oracle.ReferenceError, Exception) and issubclass(oracle.SuiteError, Exception)
    assert issubclass(oracle.RequestFailed, Exception)


def test_environment_allowlist_drops_secrets():
    env = {"SYCL_CACHE_PERSISTENT": "1", "ZE_AFFINITY_MASK": "0", "HOME": "/root", "VLLM_API_KEY": "s",
           "CUDA_VISIBLE_DEVICES": "1", "HF_TOKEN": "t", "LLAMA_ARG_PASSWORD": "p", "PATH": "/bin"}
    assert filtered_environment(env) == {"CUDA_VISIBLE_DEVICES": "1", "SYCL_CACHE_PERSISTENT": "1",
                                         "ZE_AFFINITY_MASK": "0"}


def test_secret_arguments_are_redacted():
    cmd = "vllm serve m --api-key sk-123 --port {port} --hf-token=abc --dtype float16"
    out = redact_command(cmd)
    assert "sk-123" not in out and "abc" not in out and "--api-key '***'" in out and "--hf-token=***" in out
    assert "--dtype float16" in out
    flags = "vllm serve m --enable-prompt-tokens-details --speculative-config '{\"method\":\"ngram\"}' --api_key=k"
    out = redact_command(flags)
    assert "--enable-prompt-tokens-details --speculative-config" in out and "ngram" in out and "--api_key=***" in out
