"""The in-process `python` family: your own runner object, loaded from `--backend=python:MODULE:FACTORY`.

    backend = PythonRunnerBackend(None, locator="examples/custom-runner/ov_runner.py:make_runner",
                                  runner_args=(("ir", "fp32"),), default_model=lambda: Path("model.gguf"))
    # default_model: the tokenizer's source when neither --oracle-model nor the runner names one (the target passes
    # the embedded GGUF's path)

The factory (called with the `--runner-arg k=v` pairs as keyword strings) returns a runner (docs/runner.md):

    vocab_size: int
    reset()                          # a fresh state: called before every prompt and every scoring pass
    prefill(ids, start) -> logits    # ids fed at positions start.. ; (vocab,) for the last position or
                                     # (len(ids), vocab) for every position of the chunk
    step(id) -> logits               # one token on top of the state: (vocab,)
    identity() -> dict               # optional: what the report says about it
    model_path                       # optional: the GGUF or model folder with its tokenizer and chat template

Generation is greedy (the argmax of each step's logits), the top-k and tail mass from a log-softmax over the
whole vocabulary. Teacher forcing is the runner's own decode path (prefill of the prompt, one step per token);
prefill scoring feeds the path as a prompt, in one call or in chunks of a chosen size (`--prefill-chunks`).
Anything the runner raises, or logits of the wrong shape, fails the request naming the runner: never retried.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import sys
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Callable

import numpy as np

from oracle.backends.base import (BackendBase, CacheEvidence, Capabilities, Completion, CompletionRequest, Counters,
                                  RequestFailed, TeacherForced, context_tokens)
from oracle.backends import python_runner_options
from oracle.backends.family import FamilyDescriptor
from oracle.backends.in_process import InProcessTokenizer
from oracle.store.json_files import MODEL_FILE_FIX, read_json

__all__ = ["FAMILY", "PythonRunnerBackend", "RUNNER_METHODS", "RunnerLoadError", "load_runner"]

RUNNER_METHODS = ("reset", "prefill", "step")


class RunnerLoadError(RuntimeError):
    """The runner cannot be imported or built; the message names the runner and the fix."""


def load_runner(locator: str, runner_args: tuple[tuple[str, str], ...] = ()):
    """MODULE:FACTORY -> the runner the factory returns. MODULE: a dotted module name on sys.path, or a .py file."""
    module_name, _, factory_name = locator.rpartition(":")
    where = f"runner {locator}"
    if not module_name or not factory_name:
        raise RunnerLoadError(f"{where}: write --backend=python:MODULE:FACTORY, e.g. "
                              "python:examples/custom-runner/ov_runner.py:make_runner")
    try:
        if module_name.endswith(".py") or "/" in module_name:
            path = Path(module_name)
            if not path.is_file():
                raise RunnerLoadError(f"{where}: no such file {module_name}; give the runner's .py file or a "
                                      "dotted module name on PYTHONPATH")
            spec = importlib.util.spec_from_file_location(f"oracle_runner_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except RunnerLoadError:
        raise
    except Exception as exc:  # the user's module: any import-time error is a load error naming it
        raise RunnerLoadError(f"{where}: importing {module_name} failed: {type(exc).__name__}: {exc} (a dotted "
                              "name must be importable: add its folder to PYTHONPATH, or give the .py file)") from None
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise RunnerLoadError(f"{where}: {module_name} has no callable {factory_name!r}; name the function that "
                              "returns the runner")
    try:
        runner = factory(**dict(runner_args))
    except Exception as exc:
        raise RunnerLoadError(f"{where}: {factory_name}({', '.join(f'{k}={v!r}' for k, v in runner_args)}) "
                              f"raised {type(exc).__name__}: {exc}") from None
    missing = [m for m in RUNNER_METHODS if not callable(getattr(runner, m, None))]
    vocab = getattr(runner, "vocab_size", None)
    if missing or not isinstance(vocab, int) or isinstance(vocab, bool) or vocab < 2:
        lacks = [f"{m}()" for m in missing] + ([] if isinstance(vocab, int) and vocab >= 2 else ["vocab_size (int)"])
        raise RunnerLoadError(f"{where}: {factory_name} returned {type(runner).__name__}, which lacks "
                              f"{', '.join(lacks)}; see docs/runner.md for the protocol")
    return runner


class PythonRunnerBackend(InProcessTokenizer, BackendBase):
    family = "python"
    teacher_forcing_method = "python runner: its prefill of the prompt, then one step per reference token " \
                             "(teacher forcing), full vocabulary"
    prefill_scoring_method = "python runner: the path fed through prefill(ids, start) as a prompt, in one call " \
                             "or in chunks; every position from a prefill, full vocabulary"
    capabilities = Capabilities(
        cache=CacheEvidence(policy="in process: the runner's state is reset before every prompt",
                            counters_hint="no server, no counters"),
        teacher_forcing=teacher_forcing_method, prefill_scoring=prefill_scoring_method, in_process=True,
        concurrent=False, restartable=False, served_context="the runner's context_length, else the model "
        "folder's config.json max_position_embeddings", prompt_logprobs=True, chunked_prefill=True)

    def __init__(self, model: str | Path | None, *, platform: str = "", locator: str = "",
                 runner_args: tuple[tuple[str, str], ...] = (),
                 default_model: Callable[[], Path] | None = None) -> None:
        """`default_model`: what gives the tokenizer and chat template when neither --oracle-model nor the runner names
        a model (the target passes the embedded GGUF's; the target layer knows where it is)."""
        if platform:
            raise RunnerLoadError(f"--backend python-{platform}: the python family has no platform tag; "
                                  "the runner picks its device (pass it with --runner-arg)")
        self.platform, self.base_url, self.locator = "", "in-process", locator
        self.runner_args = tuple(runner_args)
        start = time.perf_counter()
        self.runner = load_runner(locator, self.runner_args)
        self.load_s = time.perf_counter() - start
        self.vocab = int(self.runner.vocab_size)
        own = getattr(self.runner, "model_path", None)
        self.model_path = Path(model) if model else Path(own) if own else None
        if self.model_path is None and default_model is None:
            raise RunnerLoadError(f"the runner {locator} names no model_path: give --oracle-model (its tokenizer and chat "
                                  "template are read from it)")
        if self.model_path is None:
            self.model_path = default_model()
        self._config = self._folder_json("config.json")
        self._lock = threading.Lock()  # one runner, one state: requests sent together (a burst) run one by one

    @property
    def name(self) -> str:
        return f"runner {self.locator}"

    # -- what the session reads instead of a server's /props ---------------------------------
    def vocab_size(self) -> int:
        """The runner's own vocabulary size (its logits' length): every id it answers is checked against it."""
        return self.vocab

    def _folder_json(self, name: str) -> dict:
        path = self.model_path / name if self.model_path.is_dir() else None
        return read_json(path, dict, fix=MODEL_FILE_FIX) if path is not None and path.is_file() else {}

    def _gguf(self) -> dict:
        from oracle.backends.gguf import gguf_metadata

        return gguf_metadata(self.model_path) if self.model_path.suffix == ".gguf" else {}

    def chat_template(self) -> str | None:
        if self.model_path.suffix == ".gguf":
            return self._gguf().get("tokenizer.chat_template")
        jinja = self.model_path / "chat_template.jinja"
        return self._folder_json("tokenizer_config.json").get("chat_template") or (
            jinja.read_text() if jinja.is_file() else None)

    def special_tokens(self) -> dict[str, str]:
        if self.model_path.suffix == ".gguf":
            meta = self._gguf()
            tokens = meta.get("tokenizer.ggml.tokens", [])
            name = lambda key: tokens[meta[key]] if key in meta and meta[key] < len(tokens) else ""  # noqa: E731
            return {"bos_token": name("tokenizer.ggml.bos_token_id"), "eos_token": name("tokenizer.ggml.eos_token_id")}
        config = self._folder_json("tokenizer_config.json")
        text = lambda t: t.get("content", "") if isinstance(t, dict) else (t or "")  # noqa: E731
        return {"bos_token": text(config.get("bos_token")), "eos_token": text(config.get("eos_token"))}

    def _stop_ids(self) -> set[int]:
        own = getattr(self.runner, "stop_ids", None)
        if own is not None:
            return {int(i) for i in own}
        return self._vocabulary_stop_ids(self._config.get("eos_token_id"))

    def server_identity(self) -> dict:
        own = self._call("identity") if callable(getattr(self.runner, "identity", None)) else {}
        return {"server": f"python runner {self.locator} (in process)", "runner": self.locator,
                "runner_args": dict(self.runner_args), "runner_identity": own, "vocab_size": self.vocab,
                "model_path": str(self.model_path), "load_s": round(self.load_s, 1)}

    def served_context(self) -> int | None:
        return context_tokens(getattr(self.runner, "context_length", None)) or context_tokens(
            self._config.get("max_position_embeddings"))

    def counters(self) -> Counters | None:
        return None  # no server, no counters

    def healthy(self) -> bool:
        return True

    # -- the runner's calls, each checked -----------------------------------------------------
    def _call(self, method: str, *args):
        try:
            return getattr(self.runner, method)(*args)
        except KeyboardInterrupt:  # Ctrl-C stops the run as Ctrl-C does
            raise
        except BaseException as exc:  # the user's code (SystemExit too): named, never retried
            raise RequestFailed(f"{self.name}: {method}() raised {type(exc).__name__}: {exc}") from exc

    def _logits(self, method: str, *args, rows: int | None = None) -> np.ndarray:
        """The runner's logits in its own float type (a long prompt's rows are large; each row goes to float64 when
        it is used): (vocab,) or, from prefill, (rows, vocab); else a clear error."""
        given = self._call(method, *args)
        try:
            value = np.asarray(given)
            if not np.issubdtype(value.dtype, np.floating):
                if not (np.issubdtype(value.dtype, np.integer) or value.dtype == np.bool_):
                    raise TypeError(f"dtype {value.dtype}")
                value = value.astype(np.float64)
        except (TypeError, ValueError) as exc:  # strings, objects, ragged rows: no logits
            raise RequestFailed(f"{self.name}: {method}() returned {type(given).__name__} {repr(given)[:60]}, which "
                                f"is no array of numbers ({exc}); return the logits as floats of shape "
                                f"({self.vocab},)") from None
        if value.ndim == 2 and value.shape[0] == 1 and rows != 1:
            value = value[0]  # a batch axis of one
        fits = value.shape == (self.vocab,) or (rows is not None and value.shape == (rows, self.vocab))
        if not fits:
            want = f"({self.vocab},)" + (f" or ({rows}, {self.vocab})" if rows else "")
            raise RequestFailed(f"{self.name}: {method}() returned logits of shape {value.shape}; expected {want} "
                                f"(vocab_size {self.vocab})")
        if not np.isfinite(value).all():
            raise RequestFailed(f"{self.name}: {method}() returned logits that are not finite (NaN or inf)")
        return value

    def _prefill(self, ids: list[int], start: int) -> np.ndarray:
        """(len(ids), vocab) when the runner gives every position, else (1, vocab): the last position's."""
        out = self._logits("prefill", list(ids), start, rows=len(ids))
        return out if out.ndim == 2 else out[None, :]

    @staticmethod
    def _top(logits: np.ndarray, k: int):
        """(top ids, top logprobs, tail mass, full log-softmax, shift: raw logit = logprob + shift)."""
        top_logit = float(logits.max())
        lp = logits.astype(np.float64) - top_logit
        lse = float(np.log(np.exp(lp).sum()))
        lp -= lse
        k = min(k, lp.shape[0])
        top = np.argpartition(-lp, k - 1)[:k]
        top = top[np.argsort(-lp[top], kind="stable")]
        tail = max(float(1.0 - np.exp(lp[top]).sum()), 0.0)
        return top.tolist(), lp[top].tolist(), tail, lp, top_logit + lse

    # -- generation ------------------------------------------------------------------------
    @asynccontextmanager
    async def async_client(self, *, connections: int = 1):
        yield None  # no connection: requests run here, one at a time

    async def complete(self, client, request: CompletionRequest) -> Completion:
        return await asyncio.to_thread(self.generate, request)

    def generate(self, request: CompletionRequest) -> Completion:
        """Greedy decoding from a reset state; top-k, tail mass and the prompt's own log-probs."""
        with self._lock:
            return self._generate(request)

    def _generate(self, request: CompletionRequest) -> Completion:
        out = Completion(completion_ids=[], finish_reason="length", cached_prompt_tokens=0)
        prompt, stop = list(request.prompt_ids), self._stop_ids()
        start = time.perf_counter()
        self._call("reset")
        rows = self._prefill(prompt, 0)
        every = rows.shape[0] == len(prompt)
        logits = rows[-1]
        for _ in range(request.max_tokens):
            top_ids, top_lps, tail, lp, shift = self._top(logits, request.logprobs)
            token = int(np.argmax(lp))
            out.completion_ids.append(token)
            out.logprobs.append(float(lp[token]))
            out.top_ids.append(top_ids)
            out.top_logprobs.append(top_lps)
            out.tail_mass.append(tail)
            if request.logprobs >= self.vocab:  # the whole vocabulary: the raw logits can be rebuilt
                out.logit_shift.append(shift)
            out.token_times_s.append(time.perf_counter() - start)
            if token in stop:
                out.finish_reason = "stop"
                break
            if len(out.completion_ids) < request.max_tokens:
                logits = self._logits("step", token)
        out.prompt_logprobs = self._prompt_logprobs(prompt, rows if every and len(prompt) > 1 else None)
        out.text = self.detokenize(out.completion_ids)
        out.ttft_s = out.token_times_s[0] if out.token_times_s else None
        return out

    def _prompt_logprobs(self, prompt: list[int], rows: np.ndarray | None) -> list[float]:
        """log p(prompt[i] | prompt[:i]) for i >= 1: from the prefill's rows, else (a runner that gives the last
        position only) a pass of its own after the timed generation: prefill of the first token, then steps."""
        if len(prompt) < 2:
            return []
        if rows is None:
            self._call("reset")
            rows = np.stack([self._prefill(prompt[:1], 0)[-1]] + [self._logits("step", t) for t in prompt[1:-1]])
        out = []
        for start in range(0, len(prompt) - 1, 256):  # float64 a block at a time: a 2K prompt's rows are ~400 MB
            block = rows[start:min(start + 256, len(prompt) - 1)].astype(np.float64)
            block -= block.max(axis=1, keepdims=True)
            lse = np.log(np.exp(block).sum(axis=1))
            out += (block[np.arange(len(block)), prompt[start + 1:start + 1 + len(block)]] - lse).tolist()
        return out

    def _rows(self, rows: dict[int, np.ndarray], wanted: list[int], k: int) -> tuple[list, list, list]:
        """Top ids, top logprobs and (with the whole vocabulary, k >= vocab_size) each row's logit shift."""
        tops = [self._top(rows[i], k) for i in wanted]
        shifts = [t[4] for t in tops] if k >= self.vocab else []
        return [t[0] for t in tops], [t[1] for t in tops], shifts

    def teacher_forced(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int,
                       seed: int = 1234, positions: list[int] | None = None) -> TeacherForced:
        """Top-k after prompt + completion[:i] for each position i (default: all): the runner's decode path."""
        wanted = list(range(len(completion_ids)) if positions is None else positions)
        if not completion_ids or not wanted:
            return TeacherForced([], [], method=self.teacher_forcing_method, requests=0)
        with self._lock:
            return self._decode_path(list(prompt_ids), completion_ids, wanted, logprobs)

    def _decode_path(self, prompt_ids: list[int], completion_ids: list[int], wanted: list[int], logprobs: int):
        self._call("reset")
        rows = {0: self._prefill(list(prompt_ids), 0)[-1]}
        for i in range(1, max(wanted) + 1):
            rows[i] = self._logits("step", int(completion_ids[i - 1]))
        ids, lps, shifts = self._rows(rows, wanted, logprobs)
        return TeacherForced(ids, lps, method=self.teacher_forcing_method, requests=1, logit_shift=shifts)

    def prefill_forced(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int, seed: int = 1234,
                       positions: list[int] | None = None, chunk: int | None = None) -> TeacherForced:
        """Top-k at each position i of the path scored as a prompt: fed in one prefill call, or in chunks."""
        wanted = list(range(len(completion_ids)) if positions is None else positions)
        if not completion_ids or not wanted:
            return TeacherForced([], [], method=self.prefill_scoring_method, requests=0)
        first = len(prompt_ids) - 1  # path index of completion position 0
        path = list(prompt_ids) + list(completion_ids)
        with self._lock:
            rows, calls = self._fed(path[: first + max(wanted) + 1], chunk, {first + i for i in wanted})
        ids, lps, _ = self._rows({i - first: r for i, r in rows.items()}, wanted, logprobs)
        how = "one call" if chunk is None else f"chunks of {chunk}"
        return TeacherForced(ids, lps, method=f"{self.prefill_scoring_method} ({how})", requests=calls)

    def _fed(self, path: list[int], chunk: int | None, wanted: set[int]) -> tuple[dict[int, np.ndarray], int]:
        """Logits after path[:j + 1] for each wanted j. A runner that gives the last position only is fed one
        prefix per position (each from a reset state)."""
        def feed(ids: list[int], keep: set[int]) -> dict[int, np.ndarray]:  # only the wanted rows are kept
            self._call("reset")
            got, size = {}, chunk or len(ids)
            for start in range(0, len(ids), size):
                piece = ids[start:start + size]
                out = self._prefill(piece, start)
                first = start + len(piece) - out.shape[0]
                got.update({first + j: out[j].copy() for j in range(out.shape[0]) if first + j in keep})
            return got
        rows, calls = feed(path, wanted), 1
        for j in sorted(wanted - rows.keys()):
            rows[j] = feed(path[: j + 1], {j})[j]
            calls += 1
        return {j: rows[j] for j in wanted}, calls

    def prefill_chunking(self, chunk: int) -> str | None:
        return None  # prefill(ids, start) takes any chunk


FAMILY = FamilyDescriptor(
    name="python", help="your own runner object in this process (python:MODULE:FACTORY, docs/runner.md)",
    backend=PythonRunnerBackend, locator="MODULE:FACTORY", load_errors=(RunnerLoadError,),
    layers="runner",
    add_options=python_runner_options.add_options, settings=python_runner_options.settings_of)
