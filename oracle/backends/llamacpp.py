"""llama.cpp's native server API (`llama-server`): /completion streamed with token ids.

Greedy (temperature 0, top_k 1), fixed seed, `cache_prompt: false`, `n_probs` top logprobs
per position (taken before sampling), `return_tokens` for the ids of every streamed piece.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing
from operator import attrgetter

import httpcore
import httpx
import msgspec

from oracle.backends.base import (STOP_REASONS, BackendBase, CacheEvidence, Capabilities, Completion,
                                 CompletionRequest, Counters, PrefillChunk, RequestFailed,
                                 context_tokens, server_timings, status_words)
from oracle.backends.family import FamilyDescriptor
from oracle.backends.conformance import check_count, check_ids_counted, check_stop
from oracle.backends.faults import MalformedEvent, broken, error_event, malformed, overdue, refused
from oracle.backends.http import HttpClients
from oracle.backends.http_stream import StreamClient
from oracle.backends.launch_settings import launch_setting
from oracle.backends.llamacpp_scoring import LlamaCppScoring
from oracle.backends.metrics import Metrics
from oracle.backends.schemas import (UNSET, AnswerBroken, Detokenized, LlamaEvent, LlamaTimings, ModelList, Props,
                                     Tokenized, decoder, parse, parse_answer, parse_object)
from oracle.backends.stream import sse_batches

__all__ = ["FAMILY", "LLAMACPP_BATCH", "LLAMACPP_UBATCH", "LlamaCppBackend", "STOP_TYPES"]

COMPLETION = "/completion"  # the generation route: streamed by the gate, once by `one_shot` (a repro's curl)
# llama-server's stop_type -> the one vocabulary used in records (shared with the other families in base).
STOP_TYPES = STOP_REASONS["llamacpp"]
_ID, _LOGPROB = attrgetter("id"), attrgetter("logprob")
NAN = float("nan")
# llama.cpp's defaults (common_params n_batch, n_ubatch): the logical batch a server step fills, and the physical
# micro-batch llama_decode computes at once. It caps -ub at -b, so a prompt is computed min(-b, -ub) tokens at a time.
LLAMACPP_BATCH, LLAMACPP_UBATCH = 2048, 512
_UBATCH = (("-ub", "--ubatch-size"), ("LLAMA_ARG_UBATCH",))
_BATCH = (("-b", "--batch-size"), ("LLAMA_ARG_BATCH",))


class LlamaCppBackend(LlamaCppScoring, HttpClients, BackendBase):
    family = "llamacpp"
    teacher_forcing_method = ("llama-server: one-token steps on the growing reference prefix (/completion, "
                              "n_predict 1, n_probs k, cache_prompt true: the server's prompt cache is used "
                              "for these diagnostic requests)")
    prefill_method = ("llama-server: one request per position whose prompt is the whole prefix (n_predict 1, "
                      "cache_prompt false: a fresh prefill, split by the server into ubatches of its -ub)")
    capabilities = Capabilities(
        cache=CacheEvidence(policy="cache_prompt: false", counters_hint="start llama-server with --metrics"),
        teacher_forcing=teacher_forcing_method, prefill_scoring=prefill_method, load_gauge=True,
        served_context="llama-server /props default_generation_settings.n_ctx, the context of one slot",
        top_logprobs_gaps="llama-server sends them only for the first token of each streamed piece, and a "
                          "speculative step streams several",
        prefill_chunk="min(-b, -ub) from /props when it states them, else the launch command's -b / -ub "
                      "(or LLAMA_ARG_BATCH / LLAMA_ARG_UBATCH), else llama.cpp's defaults 2048 / 512",
        fixed_length="llama-server /completion ignore_eos: true",
        sampling="temperature, top_p and a seed per request, top_k 0 and min_p 0; a path scored by teacher forcing "
                 "with each given token forced by logit_bias (its logprob read from the raw logits)")

    def __init__(self, base_url: str, *, platform: str = "", transport: httpx.BaseTransport | None = None,
                 async_transport: httpx.AsyncBaseTransport | None = None, timeout_s: float | None = None) -> None:
        self._connect(base_url, transport=transport, async_transport=async_transport, timeout_s=timeout_s)
        self.platform = platform
        self._props: Props | None = None
        self._vocab: int | None = None  # 0: the server does not state it

    # -- administration (sync) -------------------------------------------------
    def props(self) -> Props:
        if self._props is None:
            self._props = self._get_json("/props", Props)
        return self._props

    def _get_json(self, path: str, shape):
        try:
            r = self._client.get(path)
        except httpx.HTTPError as exc:
            raise RequestFailed(f"GET {self.base_url}{path}: {type(exc).__name__}: {exc}") from exc
        if r.status_code != 200:
            raise RequestFailed(f"GET {self.base_url}{path}: {status_words(r)}")
        return parse_answer(r.content, shape, where=f"GET {path}")

    def _post_json(self, path: str, body: dict, shape):
        try:
            r = self._client.post(path, json=body)
        except httpx.HTTPError as exc:
            raise RequestFailed(f"POST {self.base_url}{path}: {type(exc).__name__}: {exc}") from exc
        if r.status_code != 200:
            raise RequestFailed(f"POST {path}: HTTP {r.status_code}: {r.text[:200]}")
        return parse_answer(r.content, shape, where=f"POST {path}")

    def healthy(self) -> bool:
        try:
            return self._client.get("/health", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def chat_template(self) -> str | None:
        return self.props().chat_template or None

    def special_tokens(self) -> dict[str, str]:
        p = self.props()
        return {"bos_token": p.bos_token, "eos_token": p.eos_token}

    def tokenize(self, text: str) -> list[int]:
        body = {"content": text, "add_special": False, "parse_special": True}
        return self._post_json("/tokenize", body, Tokenized).ids()

    def detokenize(self, ids: list[int]) -> str:
        answer = self._post_json("/detokenize", {"tokens": list(ids)}, Detokenized)
        if answer.content is None:
            raise AnswerBroken("POST /detokenize: the server's answer breaks its schema: no field content")
        return answer.content

    def vocab_size(self) -> int | None:
        """n_vocab from llama-server's /v1/models `meta` (None when it does not state it)."""
        if self._vocab is None:
            try:
                models = self._get_json("/v1/models", ModelList)
            except RequestFailed as exc:
                if isinstance(exc, AnswerBroken):
                    raise
                models = ModelList(data=[])
            meta = models.data[0].meta if models.data else None
            self._vocab = (context_tokens(meta.n_vocab) if meta else None) or 0
        return self._vocab or None

    def server_identity(self) -> dict:
        p = self.props()
        return {
            "server": "llama-server",
            "build": p.build_info,
            "model_path": p.model_path,
            "total_slots": p.total_slots,
            "n_ctx": p.default_generation_settings.n_ctx,
            "chat_template_source": "server /props",
        }

    def served_context(self) -> int | None:
        """The context of one slot, as llama-server has it (the model's training context can cap -c)."""
        return context_tokens(self.props().default_generation_settings.n_ctx)

    def prefill_chunk(self, launch_command: str | None) -> PrefillChunk:
        """The micro-batch (-ub) is what chunks a prompt: llama_decode splits the server's batch (-b) into
        micro-batches of -ub tokens (-ub capped at -b), each computed in one graph with the earlier ones read back
        from the KV cache. So a prompt longer than min(-b, -ub) is prefilled in several chunks."""
        props = self.props()
        settings = props.default_generation_settings
        stated = {"n_batch": context_tokens(props.n_batch if props.n_batch is not None else settings.n_batch),
                  "n_ubatch": context_tokens(props.n_ubatch if props.n_ubatch is not None else settings.n_ubatch)}
        if stated["n_ubatch"]:  # builds that state their batch sizes in /props
            batch = stated["n_batch"] or stated["n_ubatch"]
            chunk = min(batch, stated["n_ubatch"])
            return PrefillChunk(chunk, f"llama-server /props n_ubatch {stated['n_ubatch']}, n_batch {batch}",
                                "-ub" if chunk == stated["n_ubatch"] else "-b")
        if launch_command is None:
            return PrefillChunk(None, "llama-server /props does not state n_batch / n_ubatch and a --oracle-url server's "
                                "flags are not visible to oracle: start it with --launch (or the embedded default) "
                                "so oracle reads -b / -ub", "-ub")
        sizes = {}
        for name, (flags, env), default in (("ub", _UBATCH, LLAMACPP_UBATCH), ("b", _BATCH, LLAMACPP_BATCH)):
            given = launch_setting(launch_command, flags, env)
            try:
                sizes[name] = (int(given[0]), given[1]) if given else (default, f"llama.cpp's default -{name} "
                                                                                  f"{default}")
            except ValueError:
                return PrefillChunk(None, f"{given[1]}: not a whole number", f"-{name}")
        (ub, ub_from), (b, b_from) = sizes["ub"], sizes["b"]
        chunk = min(ub, b)
        return PrefillChunk(chunk, f"{ub_from}, {b_from} (/props does not state them; llama.cpp computes a prompt "
                                   f"min(-b, -ub) = {chunk} tokens at a time)", "-ub" if ub <= b else "-b")

    def _metrics(self, timeout: float | None = None) -> Metrics | None:
        """/metrics parsed, or None when the server runs without --metrics (or does not answer)."""
        try:
            r = self._client.get("/metrics", timeout=timeout or self._client.timeout)
        except httpx.HTTPError:
            return None
        return Metrics.parse(r.text) if r.status_code == 200 else None

    def counters(self) -> Counters | None:
        """Counters from /metrics, or None when the server runs without --metrics."""
        m = self._metrics()
        return None if m is None else m.counters()

    def load(self) -> int | None:
        """Requests the server is processing now (`llamacpp:requests_processing`), None without --metrics."""
        m = self._metrics(timeout=5.0)
        return None if m is None else m.running()

    def speculative_config(self) -> str | None:
        """What the server says about its speculation: a speculative slot (/slots: a draft model, and with this
        llama-server n-gram speculation too), or the speculative types in /props. None when it says nothing."""
        try:
            slots = self._get_json("/slots", list)
        except RequestFailed:
            slots = []
        if isinstance(slots, list) and any(isinstance(x, dict) and x.get("speculative") for x in slots):
            return "speculative decoding on (/slots speculative: true)"
        params = self.props().default_generation_settings.params
        types = params.get("speculative.types") or params.get("speculative.type")
        return None if not types or types == "none" else f"speculative types {types} (/props)"

    # -- generation (async) ------------------------------------------------------
    def request_body(self, request: CompletionRequest) -> dict:
        sampler = ({"temperature": 0.0, "top_k": 1} if request.temperature is None else
                   {"temperature": request.temperature, "top_p": request.top_p, "top_k": 0, "min_p": 0.0})
        body = {
            "prompt": list(request.prompt_ids),
            "n_predict": request.max_tokens,
            **sampler,
            "seed": request.seed,
            "n_probs": request.logprobs,
            "return_tokens": True,
            "cache_prompt": False,
            "stream": True,
        }
        if request.ignore_eos:
            body["ignore_eos"] = True
        return body

    def one_shot(self, request: CompletionRequest) -> tuple[str, dict]:
        return COMPLETION, {**self.request_body(request), "stream": False}

    def one_shot_ids(self, answer: dict) -> tuple[list[int], str]:
        event = parse_object(answer, LlamaEvent, where=f"POST {COMPLETION}")
        return list(event.tokens), event.content

    async def complete(self, client: StreamClient | httpx.AsyncClient, request: CompletionRequest) -> Completion:
        body = self.request_body(request)
        out = Completion(completion_ids=[], finish_reason="")
        start = time.perf_counter()
        last = start  # the last event's arrival: how long the server had been silent at a deadline
        final: LlamaEvent | None = None
        text: list[str] = []
        where = f"POST {COMPLETION}"
        ids, first_token, decode = out.completion_ids, request.first_token, decoder(LlamaEvent).decode
        try:
            async with asyncio.timeout(self._timeout.read), client.stream("POST", COMPLETION, json=body) as r:
                if r.status_code != 200:
                    raise refused(r.status_code, await r.aread(), route=COMPLETION)
                async with aclosing(sse_batches(r.aiter_bytes())) as batches:
                    async for arrived, payloads in batches:  # one step per network read; its events share its time
                        last, now = arrived, arrived - start
                        for payload in payloads:
                            try:
                                event = decode(payload)
                            except msgspec.DecodeError:  # NaN, wrong shapes, not JSON: worded by parse
                                event = parse(payload, LlamaEvent, where=where)
                            if event.error is not UNSET:
                                raise error_event(event.error, route=COMPLETION, after=len(ids))
                            if event.tokens:
                                _take_event(out, event, now)
                                if len(ids) > request.max_tokens:
                                    check_count(len(ids), request, where=where)
                                if first_token is not None:
                                    first_token.set()
                                    first_token = None
                            elif event.content:  # return_tokens asked: every piece has its ids
                                raise AnswerBroken(f"{where}: the server's answer breaks the request: an event with "
                                                   f"text {event.content[:40]!r} and no token ids (field tokens is "
                                                   f"empty; return_tokens was asked) after {len(ids)} tokens")
                            text.append(event.content)
                            if event.stop:
                                final = event
                                break
                        if final is not None:
                            break
        except TimeoutError as exc:
            raise overdue(url=f"{self.base_url}{COMPLETION}", after=len(out.completion_ids),
                          total_s=self._timeout.read, silent_s=time.perf_counter() - last) from exc
        except (httpx.HTTPError, httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as exc:
            # httpcore's own errors can escape httpx while a stream is being closed after a failure.
            raise broken(exc, url=f"{self.base_url}{COMPLETION}", after=len(out.completion_ids),
                         read_timeout_s=self._timeout.read) from exc
        except MalformedEvent as exc:
            raise malformed(exc, route=COMPLETION, after=len(out.completion_ids)) from exc
        if final is None:
            raise RequestFailed(f"POST /completion: the stream ended without its final message "
                                f"after {len(out.completion_ids)} tokens (server died or connection cut)")
        out.text = "".join(text)
        out.finish_reason = check_stop(final.stop_type, STOP_TYPES, engine="stop_type", where=where)
        timings = final.timings if final.timings is not UNSET else LlamaTimings()
        check_ids_counted(out, timings.predicted_n, field="tokens", counter="timings.predicted_n", where=where)
        out.cached_prompt_tokens = timings.cache_n if timings.cache_n is not UNSET else final.tokens_cached_prompt
        if timings.draft_n is not UNSET:
            out.drafted = timings.draft_n
            out.accepted = timings.draft_n_accepted if timings.draft_n_accepted is not UNSET else 0
        out.ttft_s = out.token_times_s[0] if out.token_times_s else None
        out.server_timings = server_timings(timings.as_dict())
        return out


def _take_event(out: Completion, event: LlamaEvent, now: float) -> None:
    """One event's tokens (at least one), their time and logprobs into the completion (the inner loop of every
    token: one token per event with its probabilities is the common case, taken without a loop)."""
    ids, probs = event.tokens, event.completion_probabilities
    out.completion_ids.extend(ids)
    if len(ids) == 1 and probs:
        p = probs[0]
        out.token_times_s.append(now)
        out.logprobs.append(NAN if p.logprob is None else p.logprob)
        tops = p.top_logprobs
        out.top_ids.append(list(map(_ID, tops)))  # map: C loops
        out.top_logprobs.append(list(map(_LOGPROB, tops)))
        return
    out.token_times_s.extend([now] * len(ids))
    for i in range(len(ids)):
        p = probs[i] if i < len(probs) else None
        if p is None:
            out.logprobs.append(NAN)
            out.top_ids.append([])
            out.top_logprobs.append([])
            continue
        out.logprobs.append(NAN if p.logprob is None else p.logprob)
        tops = p.top_logprobs
        out.top_ids.append(list(map(_ID, tops)))
        out.top_logprobs.append(list(map(_LOGPROB, tops)))


FAMILY = FamilyDescriptor(name="llamacpp", help="llama-server's native /completion", backend=LlamaCppBackend,
                          layers="eval-callback")
