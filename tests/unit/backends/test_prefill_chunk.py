"""Where each family reads its prefill chunk size: llama-server's /props when it states it, else the launch
command's -b / -ub (flags, then LLAMA_ARG_* assignments), else llama.cpp's defaults; vLLM's
--max-num-batched-tokens, else vLLM CPU's default. A --oracle-url server's flags are not visible: unknown."""

from __future__ import annotations

import httpx

from oracle.backends.launch_settings import launch_setting
from oracle.backends.llamacpp import LlamaCppBackend
from oracle.backends.vllm import VLLMBackend

PROPS = {"default_generation_settings": {"n_ctx": 8192, "params": {}}, "total_slots": 1}


def llama(props: dict = PROPS) -> LlamaCppBackend:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=props))
    return LlamaCppBackend("http://server", transport=transport)


def test_launch_setting_reads_flags_then_assignments_then_the_environment():
    assert launch_setting("llama-server -m m -ub 256", ("-ub", "--ubatch-size")) == ("256",
                                                                                     "-ub 256 in the launch command")
    assert launch_setting("llama-server --ubatch-size=128 -m m", ("-ub", "--ubatch-size"))[0] == "128"
    assert launch_setting("exec env LLAMA_ARG_UBATCH=64 llama-server", ("-ub",), ("LLAMA_ARG_UBATCH",), environ={}) == (
        "64", "LLAMA_ARG_UBATCH=64 in the launch command")
    assert launch_setting("LLAMA_ARG_UBATCH=64 llama-server -ub 32", ("-ub",), ("LLAMA_ARG_UBATCH",))[0] == "32"
    inherited = launch_setting("llama-server", ("-ub",), ("LLAMA_ARG_UBATCH",), environ={"LLAMA_ARG_UBATCH": "96"})
    assert inherited[0] == "96" and "oracle's environment" in inherited[1]
    assert launch_setting("llama-server -m m", ("-ub",), ("LLAMA_ARG_UBATCH",), environ={}) is None
    assert launch_setting(None, ("-ub",)) is None


def test_llamacpp_chunk_is_the_micro_batch_capped_by_the_batch(monkeypatch):
    monkeypatch.delenv("LLAMA_ARG_UBATCH", raising=False)
    monkeypatch.delenv("LLAMA_ARG_BATCH", raising=False)
    default = llama().prefill_chunk("exec llama-server -m m.gguf --port {port}")
    assert (default.tokens, default.flag) == (512, "-ub")
    assert default.source.startswith("llama.cpp's default -ub 512, llama.cpp's default -b 2048")
    assert llama().prefill_chunk("llama-server -ub 256").tokens == 256
    capped = llama().prefill_chunk("llama-server -b 128 -ub 512")  # llama.cpp caps -ub at -b
    assert (capped.tokens, capped.flag) == (128, "-b")
    stated = llama({**PROPS, "n_ubatch": 64, "n_batch": 1024}).prefill_chunk(None)
    assert stated.tokens == 64 and stated.source.startswith("llama-server /props n_ubatch 64")
    url = llama().prefill_chunk(None)
    assert url.tokens is None and "a --oracle-url server's flags are not visible" in url.source
    assert llama().prefill_chunk("llama-server -ub many").tokens is None


def test_vllm_chunk_is_its_token_budget_per_step():
    cpu = VLLMBackend("http://server", platform="cpu")
    assert cpu.prefill_chunk("vllm serve m --max-num-batched-tokens 256").tokens == 256
    default = cpu.prefill_chunk("vllm serve m")
    assert default.tokens == 2048 and "vLLM CPU's default" in default.source
    assert cpu.prefill_chunk(None).tokens is None
    gpu = VLLMBackend("http://server", platform="xpu")
    assert gpu.prefill_chunk("vllm serve m").tokens is None  # the default depends on the device
    assert VLLMBackend.capabilities.preemption_counter == "vLLM /metrics vllm:num_preemptions_total"
