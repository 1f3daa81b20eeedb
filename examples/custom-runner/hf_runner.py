"""A transformers model wrapped as a runner: the protocol of docs/runner.md over a causal LM and its KV cache.

    pytest --backend=python:examples/custom-runner/hf_runner.py:make_runner --runner-arg model=PATH --reference ref

`model`: a Hugging Face model folder (default: oracle's embedded SmolLM2 converted to one, float32), `dtype`:
float32 / float16 / bfloat16. The same weights under `--backend=hf --oracle-model PATH` give the same tokens and logits:
tests/servers/test_python_runner.py checks it.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM


class TransformersRunner:
    def __init__(self, folder: Path, dtype: str) -> None:
        self.model_path = folder  # its tokenizer.json and chat template render the prompts
        self.model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=getattr(torch, dtype)).eval()
        self.vocab_size = self.model.config.vocab_size
        self.dtype, self.cache = dtype, None
        # transformers 5 renamed past_key_values to cache; older releases know only the first.
        self.cache_arg = "cache" if "cache" in inspect.signature(self.model.forward).parameters else "past_key_values"

    def reset(self) -> None:
        self.cache = None

    @torch.inference_mode()
    def _forward(self, ids: list[int]):
        out = self.model(torch.tensor([ids]), use_cache=True, **{self.cache_arg: self.cache})
        cache = getattr(out, "cache", None)
        self.cache = cache if cache is not None else out.past_key_values
        return out.logits[0].float().numpy()

    def prefill(self, ids: list[int], start: int):
        return self._forward(ids)  # every position of the chunk; the cache already holds positions < start

    def step(self, token: int):
        return self._forward([token])[-1]

    def identity(self) -> dict:
        import transformers

        return {"model": str(self.model_path), "dtype": self.dtype, "transformers": transformers.__version__,
                "torch": torch.__version__}


def make_runner(model: str = "", dtype: str = "float32"):
    if not model:
        from oracle.targets.openvino_export import hf_folder  # the embedded GGUF as a float32 model folder

        model = str(hf_folder())
    return TransformersRunner(Path(model), dtype)
