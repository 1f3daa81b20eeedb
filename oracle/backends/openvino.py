"""The in-process `openvino` backend: an OpenVINO IR folder on `openvino_genai.ContinuousBatchingPipeline`.

    backend = OpenVINOBackend(Path("ir-folder"), platform="cpu", ov_config={"INFERENCE_PRECISION_HINT": "f32"})

The platform tag selects the OpenVINO device (cpu -> CPU, gpu -> GPU, npu -> NPU). Generation is greedy,
with the chosen token's logprob from GenAI (`GenerationConfig.logprobs=1`: GenAI gives no top-k); the top-k
and tail mass of every position come from the IR itself, compiled with the same properties and run on
prompt + completion in one pass (teacher forcing). Requests that arrive together (a ladder level) are added to
one pipeline and generate in the same `step()` calls: each token's time is the end of the step that made it,
so the records' generating intervals prove the overlap. A new backend is a new pipeline (a new compile): boots.
"""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import asynccontextmanager
from importlib import metadata
from pathlib import Path

import numpy as np

from oracle.backends.base import (BackendBase, CacheEvidence, Capabilities, Completion, CompletionRequest, Counters,
                                 RequestFailed, TeacherForced, context_tokens)
from oracle.backends import openvino_options
from oracle.backends.family import FamilyDescriptor
from oracle.backends.in_process import InProcessTokenizer
from oracle.store.json_files import MODEL_FILE_FIX, read_json

__all__ = ["DEVICES", "FAMILY", "OpenVINOBackend", "OpenVINOLoadError"]

DEVICES = {"": "CPU", "cpu": "CPU", "gpu": "GPU", "npu": "NPU"}


class OpenVINOLoadError(RuntimeError):
    """The IR cannot be loaded; the message says what to install or pass."""


class OpenVINOBackend(InProcessTokenizer, BackendBase):
    family = "openvino"
    teacher_forcing_method = "openvino: the IR compiled with the pipeline's properties, one pass over prompt + " \
                             "completion (teacher forcing), full vocabulary"
    capabilities = Capabilities(
        cache=CacheEvidence(policy="in process: prefix caching off, each request's KV blocks its own",
                            counters_hint="no server, no counters"),
        teacher_forcing=teacher_forcing_method, in_process=True, concurrent=True, restartable=True,
        served_context="the IR's config.json max_position_embeddings")
    # Its records' top-k already come from one pass of the IR over prompt + completion, not from the decode.
    prefill_refusal = ("the openvino backend's top-k already come from one pass of the IR over prompt + "
                       "completion (teacher forcing), not from GenAI's decode: there is no decode-time top-k "
                       "to compare")

    def __init__(self, model: str | Path, *, platform: str = "", ov_config: dict[str, str] | None = None) -> None:
        if platform not in DEVICES:
            raise OpenVINOLoadError(f"--backend openvino-{platform}: unknown device; use one of "
                                    f"{', '.join('openvino-' + d for d in DEVICES if d)}")
        try:
            import openvino as ov
            import openvino_genai as genai
            import openvino_tokenizers  # noqa: F401  (registers the tokenizer IR's operations)
        except ImportError as exc:
            raise OpenVINOLoadError(f"the openvino backend needs the OpenVINO runtime ({exc}): "
                                    "pip install 'oracle[openvino]'") from None
        self.platform, self.device, self.base_url = platform, DEVICES[platform], "in-process"
        self.model_path = Path(model)
        if not (self.model_path / "openvino_model.xml").is_file():
            raise OpenVINOLoadError(f"--oracle-model {model}: no openvino_model.xml there; give an OpenVINO IR folder "
                                    "(optimum-cli export openvino), e.g. `oracle models --path openvino-fp32`")
        self.ov_config = dict(ov_config or {})
        self._ov, self._genai = ov, genai
        start = time.perf_counter()
        scheduler = genai.SchedulerConfig()
        scheduler.enable_prefix_caching = False
        scheduler.cache_size = 1  # GiB of KV blocks
        try:
            self.pipeline = genai.ContinuousBatchingPipeline(str(self.model_path), scheduler, self.device,
                                                             self.ov_config)
            self.core = ov.Core()
            self._scorer = self.core.compile_model(str(self.model_path / "openvino_model.xml"), self.device,
                                                   {k: v for k, v in self.ov_config.items()
                                                    if k != "KV_CACHE_PRECISION"})
        except RuntimeError as exc:
            raise OpenVINOLoadError(f"OpenVINO could not load {self.model_path} on {self.device} with "
                                    f"{self.ov_config or 'the default properties'}: {str(exc)[-600:]}") from None
        self.load_s = time.perf_counter() - start
        self._config = read_json(self.model_path / "config.json", dict, fix=MODEL_FILE_FIX) \
            if (self.model_path / "config.json").is_file() else {}
        self._lock = threading.Lock()
        self._waiting: dict[int, tuple] = {}
        self._driving = False
        self._next_id = 0
        self._running_now = 0

    # -- what the session reads instead of a server's /props ---------------------------------
    def _tokenizer_config(self) -> dict:
        path = self.model_path / "tokenizer_config.json"
        return read_json(path, dict, fix=MODEL_FILE_FIX) if path.is_file() else {}

    def chat_template(self) -> str | None:
        template = self._tokenizer_config().get("chat_template")
        jinja = self.model_path / "chat_template.jinja"
        return template or (jinja.read_text() if jinja.is_file() else None)

    def special_tokens(self) -> dict[str, str]:
        config = self._tokenizer_config()
        text = lambda t: t.get("content", "") if isinstance(t, dict) else (t or "")  # noqa: E731
        return {"bos_token": text(config.get("bos_token")), "eos_token": text(config.get("eos_token"))}

    def _stop_ids(self) -> set[int]:
        return self._vocabulary_stop_ids(self._config.get("eos_token_id"))

    def server_identity(self) -> dict:
        return {"server": "openvino_genai.ContinuousBatchingPipeline (in process)",
                "build": f"openvino {self._ov.get_version()}, openvino-genai {metadata.version('openvino-genai')}",
                "model_path": str(self.model_path), "device": self.device,
                "device_name": self.core.get_property(self.device, "FULL_DEVICE_NAME"),
                "ov_config": self.ov_config, "load_s": round(self.load_s, 1)}

    def served_context(self) -> int | None:
        return context_tokens(self._config.get("max_position_embeddings"))

    def counters(self) -> Counters | None:
        return None  # no server, no counters: prefix caching is off in the pipeline

    def healthy(self) -> bool:
        return True

    def load(self) -> int | None:
        return self._running_now

    # -- generation: every request in one pipeline, stepped by one driver thread ---------------
    @asynccontextmanager
    async def async_client(self, *, connections: int = 1):
        yield None  # no connection: requests go into the pipeline

    def _generation_config(self, request: CompletionRequest):
        config = self._genai.GenerationConfig()
        config.max_new_tokens = request.max_tokens
        config.do_sample = False
        config.logprobs = 1
        config.stop_token_ids = self._stop_ids()
        return config

    async def complete(self, client, request: CompletionRequest) -> Completion:
        loop = asyncio.get_running_loop()
        done: asyncio.Future = loop.create_future()
        out = Completion(completion_ids=[], finish_reason="length", cached_prompt_tokens=0)
        with self._lock:
            rid, self._next_id = self._next_id, self._next_id + 1
            ids = self._ov.Tensor(np.array([request.prompt_ids], dtype=np.int64))
            handle = self.pipeline.add_request(rid, ids, self._generation_config(request))
            self._waiting[rid] = (handle, out, time.perf_counter(), loop, done)
            start_driver = not self._driving
            self._driving = True
        if start_driver:
            await asyncio.sleep(0)  # let the other requests of this wave be added before the first step
            threading.Thread(target=self._drive, daemon=True).start()
        error = await done
        if error:
            raise RequestFailed(f"openvino generation failed after {len(out.completion_ids)} tokens: {error}")
        out.text = self.detokenize(out.completion_ids)
        out.ttft_s = out.token_times_s[0] if out.token_times_s else None
        if request.logprobs > 1 and out.completion_ids:
            out.top_ids, out.top_logprobs, out.tail_mass = self._score(list(request.prompt_ids), out.completion_ids,
                                                                       range(len(out.completion_ids)),
                                                                       request.logprobs)
        return out

    def _drive(self) -> None:
        finished = self._genai.GenerationStatus.FINISHED
        while True:
            with self._lock:
                if not self._waiting:
                    self._driving = False
                    return
                self._running_now = len(self._waiting)
                error = None
                try:
                    self.pipeline.step()
                except RuntimeError as exc:
                    error = str(exc)
                now = time.perf_counter()
                for rid, (handle, out, started, loop, done) in list(self._waiting.items()):
                    if error is None and handle.can_read():
                        for piece in handle.read().values():  # the tokens made since the last read
                            new = list(piece.generated_ids)
                            out.completion_ids.extend(new)
                            out.logprobs.extend(piece.generated_log_probs)
                            out.token_times_s.extend([now - started] * len(new))
                            if str(piece.finish_reason).endswith("STOP"):
                                out.finish_reason = "stop"
                    if error is not None or handle.get_status() == finished:
                        del self._waiting[rid]
                        loop.call_soon_threadsafe(done.set_result, error)
                self._running_now = len(self._waiting)

    def teacher_forced(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int,
                       seed: int = 1234, positions: list[int] | None = None) -> TeacherForced:
        """Top-k logprobs after prompt + completion[:i] for each position i (default: all), one pass of the IR."""
        wanted = list(range(len(completion_ids)) if positions is None else positions)
        if not completion_ids or not wanted:
            return TeacherForced([], [], method=self.teacher_forcing_method, requests=0)
        top_ids, top_lps, _ = self._score(prompt_ids, completion_ids, wanted, logprobs)
        return TeacherForced(top_ids, top_lps, method=self.teacher_forcing_method, requests=1)

    def _score(self, prompt_ids, completion_ids, wanted, k: int):
        """(top ids, top logprobs, tail mass) at the wanted completion positions, from the IR's full logits."""
        ids = np.array([list(prompt_ids) + list(completion_ids)], dtype=np.int64)
        request = self._scorer.create_infer_request()
        inputs = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                  "position_ids": np.arange(ids.shape[1], dtype=np.int64)[None, :], "beam_idx": np.zeros(1, np.int32)}
        names = {n for port in self._scorer.inputs for n in port.get_names()}
        request.reset_state()
        logits = request.infer({k: v for k, v in inputs.items() if k in names})[self._scorer.output(0)][0]
        rows = logits[len(prompt_ids) - 1 + np.array(list(wanted))].astype(np.float64)
        lp = rows - rows.max(axis=1, keepdims=True)
        lp -= np.log(np.exp(lp).sum(axis=1, keepdims=True))
        top = np.argsort(-lp, axis=1, kind="stable")[:, :min(k, lp.shape[1])]
        top_lps = np.take_along_axis(lp, top, axis=1)
        tails = [max(float(1.0 - np.exp(r).sum()), 0.0) for r in top_lps]
        return top.tolist(), top_lps.tolist(), tails


FAMILY = FamilyDescriptor(
    name="openvino", help="an OpenVINO IR on GenAI's pipeline in this process", backend=OpenVINOBackend,
    load_errors=(OpenVINOLoadError,), layers="ir",
    add_options=openvino_options.add_options, settings=openvino_options.settings_of)
