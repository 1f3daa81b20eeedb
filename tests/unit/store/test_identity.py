import oracle
from oracle.store.identity import filtered_environment


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


def test_environment_allowlist_keeps_secret_names_with_their_values_hidden():
    env = {"SYCL_CACHE_PERSISTENT": "1", "ZE_AFFINITY_MASK": "0", "HOME": "/root", "VLLM_API_KEY": "s",
           "CUDA_VISIBLE_DEVICES": "1", "HF_TOKEN": "t", "LLAMA_ARG_PASSWORD": "p", "PATH": "/bin",
           "VLLM_MAX_TOKENS": "8", "ORACLE_PROXY": "http://me:pw@proxy:3128"}
    assert filtered_environment(env) == {"CUDA_VISIBLE_DEVICES": "1", "LLAMA_ARG_PASSWORD": "***",
                                         "ORACLE_PROXY": "http://me:***@proxy:3128", "SYCL_CACHE_PERSISTENT": "1",
                                         "VLLM_API_KEY": "***", "VLLM_MAX_TOKENS": "8", "ZE_AFFINITY_MASK": "0"}
