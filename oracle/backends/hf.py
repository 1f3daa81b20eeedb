"""The in-process `hf` backend: transformers + torch on the same weights, full-vocabulary logits.

    backend = HfBackend(Path("model.gguf"), platform="cpu", dtype="float32")

Loads a Hugging Face model folder, or a GGUF through transformers (`gguf_file=`, dequantized),
in float32, float16 or bfloat16. There is no server: every request is a fresh forward pass with
its own KV cache, so no prefix is ever shared between requests. Prompts are the same token ids
the servers get (the session renders the GGUF's or folder's chat template and tokenizes with
the same tokenizer); logprobs are log-softmax over the whole vocabulary, of which the top k and
the tail mass (1 - their sum) are kept.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from contextlib import asynccontextmanager
from importlib import metadata
from pathlib import Path

from oracle.backends.base import (BackendBase, CacheEvidence, Capabilities, Completion, CompletionRequest, Counters,
                                  OnePassPrefill, RequestFailed, TeacherForced, context_tokens)
from oracle.backends import hf_options
from oracle.backends.family import FamilyDescriptor
from oracle.backends.in_process import EOG_TEXTS, InProcessTokenizer
from oracle.store.json_files import MODEL_FILE_FIX, read_json

__all__ = ["DTYPES", "FAMILY", "HfBackend", "HfLoadError"]

DTYPES = hf_options.DTYPES
_DEVICES = {"": "cpu", "cpu": "cpu", "cuda": "cuda", "xpu": "xpu", "mps": "mps"}


class HfLoadError(RuntimeError):
    """The model cannot be loaded in process; the message says what to install or pass."""


class HfBackend(OnePassPrefill, InProcessTokenizer, BackendBase):
    family = "hf"
    teacher_forcing_method = "hf: one forward pass over prompt + reference completion (teacher forcing), full vocabulary"
    capabilities = Capabilities(
        cache=CacheEvidence(policy="in process: a fresh KV cache per request", counters_hint="no server, no counters"),
        teacher_forcing=teacher_forcing_method, in_process=True, concurrent=False, restartable=False,
        served_context="the model config's max_position_embeddings", precision_floor=True,
        prefill_scoring=teacher_forcing_method)
    chunking_refusal = ("the hf backend scores a path in one forward pass; feeding it chunk by chunk through its "
                        "KV cache is not built")

    def __init__(self, model: str | Path, *, platform: str = "", dtype: str = "float32") -> None:
        if platform not in _DEVICES:
            raise HfLoadError(f"--backend hf-{platform}: unknown device; use one of "
                              f"{', '.join('hf-' + d for d in _DEVICES if d)}")
        if dtype not in DTYPES:
            raise HfLoadError(f"--dtype {dtype!r}: must be one of {', '.join(DTYPES)}")
        try:
            import torch
            from transformers import AutoModelForCausalLM
            from transformers.utils import logging as transformers_logging
        except ImportError as exc:
            raise HfLoadError(f"the hf backend needs torch and transformers ({exc}): pip install 'oracle[hf]'") from None
        transformers_logging.disable_progress_bar()  # the gate's own progress line is the one on the terminal
        self.platform = platform
        self.dtype = dtype
        self.device = _DEVICES[platform]
        self.base_url = "in-process"
        self.model_path = Path(model)
        self._torch = torch
        self._gguf = self.model_path.suffix == ".gguf"
        torch_dtype = getattr(torch, dtype)
        start = time.perf_counter()
        try:
            if self._gguf:
                self.model = AutoModelForCausalLM.from_pretrained(str(self.model_path.parent),
                                                                  gguf_file=self.model_path.name, dtype=torch_dtype)
            else:
                self.model = AutoModelForCausalLM.from_pretrained(str(self.model_path), dtype=torch_dtype)
        except (OSError, ValueError, ImportError) as exc:
            raise HfLoadError(f"transformers could not load {self.model_path} in {dtype}: {exc}. Give a Hugging "
                              "Face model folder or a GGUF whose architecture transformers reads (needs the "
                              "`gguf` and `accelerate` packages: pip install 'oracle[hf]')") from None
        self.model.to(self.device).eval()
        self.load_s = time.perf_counter() - start
        self._metadata = self._read_metadata()
        self._eog = self._end_of_generation_ids()
        # transformers 5 renamed past_key_values to cache; older releases know only the first.
        self._cache_arg = "cache" if "cache" in inspect.signature(self.model.forward).parameters else "past_key_values"

    # -- what the session reads instead of a server's /props ---------------------------------
    def _read_metadata(self) -> dict:
        if self._gguf:
            from oracle.backends.gguf import gguf_metadata

            meta = gguf_metadata(self.model_path)
            tokens = meta.get("tokenizer.ggml.tokens", [])
            name = lambda key: tokens[meta[key]] if key in meta and meta[key] < len(tokens) else ""  # noqa: E731
            return {"chat_template": meta.get("tokenizer.chat_template"), "chat_template_source": "gguf metadata",
                    "bos_token": name("tokenizer.ggml.bos_token_id"), "eos_token": name("tokenizer.ggml.eos_token_id"),
                    "eog_ids": [meta[k] for k in ("tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                                                  "tokenizer.ggml.eom_token_id") if k in meta],
                    "tokens": tokens}
        config = {}
        path = self.model_path / "tokenizer_config.json"
        if path.is_file():
            config = read_json(path, dict, fix=MODEL_FILE_FIX)
        template, source = config.get("chat_template"), "tokenizer_config.json"
        jinja = self.model_path / "chat_template.jinja"
        if template is None and jinja.is_file():
            template, source = jinja.read_text(), "chat_template.jinja"
        text = lambda t: t.get("content", "") if isinstance(t, dict) else (t or "")  # noqa: E731
        eos = self.model.generation_config.eos_token_id if self.model.generation_config else None
        eos = eos if eos is not None else self.model.config.eos_token_id
        return {"chat_template": template, "chat_template_source": source, "bos_token": text(config.get("bos_token")),
                "eos_token": text(config.get("eos_token")),
                "eog_ids": list(eos) if isinstance(eos, (list, tuple)) else [eos] if eos is not None else [],
                "tokens": []}

    def _end_of_generation_ids(self) -> set[int]:
        ids = {int(i) for i in self._metadata["eog_ids"]}
        ids |= {i for i, t in enumerate(self._metadata["tokens"]) if t in EOG_TEXTS}
        return ids

    def chat_template(self) -> str | None:
        return self._metadata["chat_template"] or None

    def special_tokens(self) -> dict[str, str]:
        return {"bos_token": self._metadata["bos_token"], "eos_token": self._metadata["eos_token"]}

    def server_identity(self) -> dict:
        torch = self._torch
        return {"server": "transformers (in process)", "build": f"transformers {metadata.version('transformers')}, "
                f"torch {torch.__version__}", "model_path": str(self.model_path), "dtype": self.dtype,
                "device": self.device, "dequantized_from_gguf": self._gguf, "torch_threads": torch.get_num_threads(),
                "load_s": round(self.load_s, 1), "chat_template_source": self._metadata["chat_template_source"]}

    def served_context(self) -> int | None:
        return context_tokens(getattr(self.model.config, "max_position_embeddings", None))

    def counters(self) -> Counters | None:
        return None  # no server, no counters: every request runs with a fresh KV cache

    def healthy(self) -> bool:
        return True

    # -- generation ------------------------------------------------------------------------
    @asynccontextmanager
    async def async_client(self, *, connections: int = 1):
        yield None  # no connection: requests run here, one at a time

    async def complete(self, client, request: CompletionRequest) -> Completion:
        return await asyncio.to_thread(self.generate, request)

    def _top(self, logits, k: int):
        """(top ids, top logprobs, tail mass, log-softmax) of one position's logits, in float64 for the tail."""
        torch = self._torch
        lp = torch.log_softmax(logits.double(), dim=-1)
        top = torch.topk(lp, min(k, lp.shape[-1]))
        tail = float(1.0 - torch.exp(top.values).sum())
        return top.indices.tolist(), top.values.tolist(), max(tail, 0.0), lp

    def generate(self, request: CompletionRequest) -> Completion:
        """Greedy decoding with a fresh KV cache; top-k logprobs and tail mass at every position."""
        torch = self._torch
        out = Completion(completion_ids=[], finish_reason="length", cached_prompt_tokens=0)
        start = time.perf_counter()
        try:
            with torch.inference_mode():
                ids = torch.tensor([list(request.prompt_ids)], device=self.device)
                step = self.model(ids, use_cache=True)
                for _ in range(request.max_tokens):
                    top_ids, top_lps, tail, lp = self._top(step.logits[0, -1], request.logprobs)
                    token = int(torch.argmax(lp))
                    out.completion_ids.append(token)
                    out.logprobs.append(float(lp[token]))
                    out.top_ids.append(top_ids)
                    out.top_logprobs.append(top_lps)
                    out.tail_mass.append(tail)
                    if request.logprobs >= lp.shape[-1]:  # the whole vocabulary: raw logit = logprob + shift
                        out.logit_shift.append(_shift(step.logits[0, -1], lp))
                    out.token_times_s.append(time.perf_counter() - start)
                    if token in self._eog:
                        out.finish_reason = "stop"
                        break
                    step = self.model(torch.tensor([[token]], device=self.device), use_cache=True,
                                      **{self._cache_arg: _cache_of(step)})
        except RuntimeError as exc:  # out of memory, device errors
            raise RequestFailed(f"hf generation failed after {len(out.completion_ids)} tokens: {exc}") from exc
        out.text = self.detokenize(out.completion_ids)
        out.ttft_s = out.token_times_s[0] if out.token_times_s else None
        return out

    def teacher_forced(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int,
                       seed: int = 1234, positions: list[int] | None = None) -> TeacherForced:
        """Top-k logprobs after prompt + completion[:i] for each position i (default: all), one forward pass."""
        torch = self._torch
        rows_ids, rows_lps, shifts = [], [], []
        wanted = range(len(completion_ids)) if positions is None else positions
        if completion_ids and wanted:
            with torch.inference_mode():
                ids = torch.tensor([list(prompt_ids) + list(completion_ids)], device=self.device)
                logits = self.model(ids).logits[0]
            first = len(prompt_ids) - 1
            for i in wanted:
                top_ids, top_lps, _, lp = self._top(logits[first + i], logprobs)
                rows_ids.append(top_ids)
                rows_lps.append(top_lps)
                if logprobs >= lp.shape[-1]:
                    shifts.append(_shift(logits[first + i], lp))
        return TeacherForced(rows_ids, rows_lps, method=f"{self.teacher_forcing_method} ({self.dtype})",
                             requests=1 if rows_ids else 0, logit_shift=shifts)


def _shift(logits, lp) -> float:
    """The log-partition of one row: raw logit = logprob + shift (the same for every id; read at the top id)."""
    top = int(lp.argmax())
    return float(logits[top].double() - lp[top])


def _cache_of(output):
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


FAMILY = FamilyDescriptor(
    name="hf", help="transformers in this process", backend=HfBackend, load_errors=(HfLoadError,),
    layers="torch-module",
    add_options=hf_options.add_options, settings=hf_options.settings_of)
