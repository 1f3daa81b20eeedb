"""A stateful runner over a raw OpenVINO IR, driven step by step as a custom graph's own loop drives it.

    pytest --backend=python:examples/custom-runner/ov_runner.py:make_runner --record ref --reference-kind f16
    pytest --backend=python:examples/custom-runner/ov_runner.py:make_runner --runner-arg ir=int4 --reference ref

The IR is compiled with `openvino.Core().compile_model` (not GenAI) and fed in the field note's shape: `input_ids`
in chunks of at most 256 tokens (`--runner-arg chunk=N`), then one token per step, the KV state reset per prompt
(`reset_state()`). `ir`: fp32 / int8 / int4 (oracle's embedded SmolLM2 IRs, `oracle models --path openvino-fp32`) or
the path of any stateful IR folder (optimum-cli export openvino --task text-generation-with-past).

`layer_outputs(token_ids)` (the runner protocol's optional method, read by `oracle localize`): each decoder layer's
output at every position, from the same IR with its layer-ending nodes added as outputs (compiled once, on first
use, with the same device and precision).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov


class OpenVINOStepRunner:
    """The runner protocol (docs/runner.md) over one compiled IR and its one stateful infer request."""

    def __init__(self, folder: Path, *, device: str, chunk: int, precision: str) -> None:
        self.model_path = folder  # its tokenizer.json and chat template render the prompts
        self.core = ov.Core()
        self.compiled = self.core.compile_model(str(folder / "openvino_model.xml"), device,
                                                {"INFERENCE_PRECISION_HINT": precision})
        self.request = self.compiled.create_infer_request()
        self.names = {n for port in self.compiled.inputs for n in port.get_names()}
        self.vocab_size = self.compiled.output(0).get_partial_shape()[2].get_length()
        self.device, self.chunk, self.precision = device, chunk, precision
        self.past = 0  # tokens already in the KV state

    def reset(self) -> None:
        self.request.reset_state()
        self.past = 0

    def _feed(self, ids: list[int]) -> np.ndarray:
        """The field note's feed(ids, pos): ids at positions past.., logits of each of them."""
        n = len(ids)
        inputs = {"input_ids": np.array([ids], dtype=np.int64),
                  "attention_mask": np.ones((1, self.past + n), dtype=np.int64),
                  "position_ids": np.arange(self.past, self.past + n, dtype=np.int64)[None, :],
                  "beam_idx": np.zeros(1, dtype=np.int32)}
        logits = self.request.infer({k: v for k, v in inputs.items() if k in self.names})[self.compiled.output(0)]
        self.past += n
        return np.array(logits[0], copy=True)

    def prefill(self, ids: list[int], start: int) -> np.ndarray:
        if start != self.past:
            raise ValueError(f"prefill at position {start}, but the state holds {self.past} tokens")
        return np.concatenate([self._feed(ids[i:i + self.chunk]) for i in range(0, len(ids), self.chunk)])

    def step(self, token: int) -> np.ndarray:
        return self._feed([token])[-1]

    def layer_outputs(self, token_ids: list[int]) -> dict[str, np.ndarray]:
        from oracle.localize.openvino_layers import ir_layer_outputs  # the residual adds of each layer, by index

        return ir_layer_outputs(self.model_path / "openvino_model.xml", list(token_ids), device=self.device,
                                config={"INFERENCE_PRECISION_HINT": self.precision}, core=self.core,
                                parts=False)

    def identity(self) -> dict:
        return {"ir": str(self.model_path), "device": self.device, "openvino": ov.get_version(),
                "inference_precision_hint": self.precision, "prefill_chunk": self.chunk,
                "driven_by": "openvino.Core().compile_model, one stateful infer request"}


def make_runner(ir: str = "fp32", device: str = "CPU", chunk: str = "256", precision: str = "f32"):
    folder = Path(ir)
    if not (folder / "openvino_model.xml").is_file():
        from oracle.targets.openvino_export import openvino_model  # the embedded SmolLM2 IR of that weight format

        folder = openvino_model(ir)
    return OpenVINOStepRunner(folder, device=device, chunk=int(chunk), precision=precision)
