"""Any OpenAI-compatible server (SGLang, TGI, OpenVINO Model Server, llama.cpp's OpenAI routes, vLLM, ...).

`/v1/completions`, streamed, the prompt as token ids, temperature 0, `logprobs` top-k. Token ids
are taken from wherever the server gives them: `choices[].token_ids` (vLLM's `return_token_ids`),
`logprobs.content[].id` (llama.cpp), `logprobs.tokens` as `token_id:N` (vLLM's
`return_tokens_as_token_ids`). A server that gives none is compared on text, and every record
says so (`ids_source: text`); the report carries the downgrade note, never silently. So is an answer
whose ids are fewer than its `usage.completion_tokens` (llama-server's OpenAI route gives one logprobs
entry per character, and none for the drafted tokens a speculative server accepts): such ids do not
spell the text, and none of them is kept.

A server without `/v1/completions` (it answers 404 or 405) gets the suite's messages on
`/v1/chat/completions` instead: it renders the chat itself, so the prompt token ids are not
oracle's, and the report says so (`choose_route`, called once before any gated request).

The cache-off fields that servers know are sent too (`cache_prompt: false` for llama.cpp, a
unique `cache_salt` for vLLM); servers ignore fields they do not know.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from contextlib import aclosing
from pathlib import Path

import httpcore
import httpx
import msgspec

from oracle.backends.base import (IDS_FROM_TEXT, STOP_REASONS, BackendBase, CacheEvidence, RouteMissing,
                                 Capabilities, Completion, CompletionRequest, Counters, RequestFailed,
                                 context_tokens, server_timings, status_words)
from oracle.backends.conformance import check_count, check_stop, ids_short
from oracle.backends.family import FamilyDescriptor
from oracle.backends.faults import MalformedEvent, broken, error_event, malformed, overdue, refused
from oracle.backends.http import HttpClients
from oracle.backends.http_stream import StreamClient
from oracle.backends.metrics import Metrics
from oracle.backends.openai_logprobs import take_tokens
from oracle.backends.schemas import (UNSET, AnswerBroken, Detokenized, ModelList, OpenAIChoice, OpenAIChunk,
                                     ServedModel, Tokenized, decoder, parse, parse_answer, parse_object)
from oracle.backends.stream import DONE, sse_batches
from oracle.store.json_files import MODEL_FILE_FIX, read_json

__all__ = ["FAMILY", "OpenAIBackend"]


class OpenAIBackend(HttpClients, BackendBase):
    family = "openai"
    capabilities = Capabilities(
        cache=CacheEvidence(
            policy="cache_prompt: false and a unique cache_salt (honoured by llama.cpp and vLLM, ignored elsewhere)",
            counters_hint="expose the server's /metrics with prefix-cache counters",
            per_request_hint="the server returned no usage.prompt_tokens_details.cached_tokens"),
        load_gauge=True, served_tokenizer=True, route_choice=True,
        served_context="/v1/models max_model_len, when the server lists it")
    completions_path = "/v1/completions"
    chat_path = "/v1/chat/completions"

    def __init__(self, base_url: str, *, platform: str = "", transport: httpx.BaseTransport | None = None,
                 async_transport: httpx.AsyncBaseTransport | None = None, timeout_s: float | None = None) -> None:
        self._connect(base_url, transport=transport, async_transport=async_transport, timeout_s=timeout_s)
        self.platform = platform
        self._models: list[ServedModel] | None = None
        self._fingerprints: set[str] = set()
        self._key_tokenizer = None
        self.route = "completions"  # or "chat" (see choose_route)

    # -- administration (sync) -------------------------------------------------
    def _get(self, path: str, timeout: float | None = None) -> httpx.Response:
        try:
            return self._client.get(path, timeout=timeout or self._client.timeout)
        except httpx.HTTPError as exc:
            raise RequestFailed(f"GET {self.base_url}{path}: {type(exc).__name__}: {exc}") from exc

    def _get_json(self, path: str, shape):
        r = self._get(path)
        if r.status_code != 200:
            raise RequestFailed(f"GET {self.base_url}{path}: {status_words(r)}")
        return parse_answer(r.content, shape, where=f"GET {path}")

    def healthy(self) -> bool:
        for path in ("/health", "/v1/models"):
            try:
                if self._client.get(path, timeout=2.0).status_code == 200:
                    return True
            except httpx.HTTPError:
                continue
        return False

    def models(self) -> list[ServedModel]:
        if self._models is None:
            self._models = self._get_json("/v1/models", ModelList).data
            if not self._models:
                raise RequestFailed(f"GET {self.base_url}/v1/models lists no model")
        return self._models

    def model_name(self) -> str:
        return self.models()[0].id

    def model_folder(self) -> Path | None:
        """The served model's folder when it is reachable from here (vLLM's `root`, or the id as a path)."""
        m = self.models()[0]
        for candidate in (m.root, m.id):
            if candidate and Path(candidate).is_dir() and (Path(candidate) / "config.json").is_file():
                return Path(candidate)
        return None

    def _tokenizer_config(self) -> dict:
        folder = self.model_folder()
        path = folder / "tokenizer_config.json" if folder else None
        return read_json(path, dict, fix=MODEL_FILE_FIX) if path and path.is_file() else {}

    def tokenizer_path(self) -> Path | None:
        """tokenizer.json of the served model folder, for local tokenization (None when unreachable)."""
        folder = self.model_folder()
        return folder / "tokenizer.json" if folder and (folder / "tokenizer.json").is_file() else None

    def chat_template(self) -> str | None:
        folder = self.model_folder()
        if folder is None:
            return None
        jinja = folder / "chat_template.jinja"
        if jinja.is_file():
            return jinja.read_text()
        template = self._tokenizer_config().get("chat_template")
        return template if isinstance(template, str) else None

    def chat_template_source(self) -> str | None:
        folder = self.model_folder()
        return f"served model folder {folder}" if folder and self.chat_template() else None

    def special_tokens(self) -> dict[str, str]:
        config = self._tokenizer_config()

        def text(value) -> str:
            return value.get("content", "") if isinstance(value, dict) else (value or "")
        return {"bos_token": text(config.get("bos_token")), "eos_token": text(config.get("eos_token"))}

    def tokenize(self, text: str) -> list[int]:
        # vLLM reads `prompt`, llama.cpp `content`; each ignores the other's field.
        body = {"model": self.model_name(), "prompt": text, "content": text, "add_special_tokens": False,
                "add_special": False, "parse_special": True}
        try:
            r = self._client.post("/tokenize", json=body)
        except httpx.HTTPError as exc:
            raise RequestFailed(f"POST /tokenize: {type(exc).__name__}: {exc}") from exc
        if r.status_code != 200:
            raise RequestFailed(f"POST /tokenize: HTTP {r.status_code}: {r.text[:200]}; this server has no tokenizer "
                                "endpoint: give the model's tokenizer with --tokenizer PATH")
        return parse_answer(r.content, Tokenized, where="POST /tokenize").ids()

    def detokenize(self, ids: list[int]) -> str:
        try:
            r = self._client.post("/detokenize", json={"model": self.model_name(), "tokens": list(ids)})
        except httpx.HTTPError as exc:
            raise RequestFailed(f"POST /detokenize: {type(exc).__name__}: {exc}") from exc
        if r.status_code != 200:
            kind = RouteMissing if r.status_code in (404, 405, 501) else RequestFailed
            raise kind(f"POST /detokenize: HTTP {r.status_code}: {r.text[:200]}")
        answer = parse_answer(r.content, Detokenized, where="POST /detokenize")
        text = answer.prompt if answer.prompt is not None else answer.content
        if text is None:
            raise AnswerBroken("POST /detokenize: the server's answer breaks its schema: neither field prompt nor "
                               "content")
        return text

    def server_identity(self) -> dict:
        m = self.models()[0]
        version = None
        try:
            r = self._get("/version", timeout=5.0)
            version = r.json().get("version") if r.status_code == 200 else None
        except (RequestFailed, ValueError, AttributeError):  # a version is identity only: never required
            pass
        return {"server": "openai-compatible", "build": version if isinstance(version, str) else None,
                "model": m.id, "model_path": str(self.model_folder()) if self.model_folder() else m.root,
                "max_model_len": m.max_model_len, "owned_by": m.owned_by,
                "chat_template_source": self.chat_template_source() or "none (ChatML fallback)"}

    def served_context(self) -> int | None:
        """max_model_len of the served model in /v1/models (vLLM lists it; a server that does not: None)."""
        return context_tokens(self.models()[0].max_model_len)

    def vocab_size(self) -> int | None:
        """n_vocab when /v1/models states it (llama-server's OpenAI routes do, in `meta`); else None."""
        meta = self.models()[0].meta
        return context_tokens(meta.n_vocab) if meta else None

    def _metrics(self, timeout: float | None = None) -> str | None:
        try:
            r = self._client.get("/metrics", timeout=timeout or self._client.timeout)
        except httpx.HTTPError:
            return None
        return r.text if r.status_code == 200 else None

    def counters(self) -> Counters | None:
        """Whichever known counters /metrics has (vLLM's or llama.cpp's names); None without /metrics."""
        text = self._metrics()
        return None if text is None else Metrics.parse(text).counters()

    def load(self) -> int | None:
        text = self._metrics(timeout=5.0)
        return None if text is None else Metrics.parse(text).running()

    def speculative_config(self) -> str | None:
        text = self._metrics(timeout=5.0)
        if text and Metrics.parse(text).speculative():
            return "speculative decoding metrics present (vllm:spec_decode_* in /metrics)"
        return None

    def system_fingerprints(self) -> list[str]:
        return sorted(self._fingerprints)

    def choose_route(self) -> str | None:
        """Ask /v1/completions for one token; a server without that route (404 / 405) that answers on
        /v1/chat/completions is driven there. Returns a note for the report when the route is chat."""
        probe = {"model": self.model_name(), "max_tokens": 1, "temperature": 0.0}
        try:
            r = self._client.post(self.completions_path, json=probe | {"prompt": "Hello"})
            if r.status_code not in (404, 405):
                return None
            c = self._client.post(self.chat_path, json=probe | {"messages": [{"role": "user", "content": "Hello"}]})
        except httpx.HTTPError as exc:
            raise RequestFailed(f"POST {self.base_url}{self.completions_path}: {type(exc).__name__}: {exc}") from exc
        if c.status_code != 200:
            raise RequestFailed(f"{self.base_url} has neither {self.completions_path} (HTTP {r.status_code}) nor a "
                                f"working {self.chat_path} (HTTP {c.status_code}: {c.text[:200]})")
        self.route = "chat"
        return (f"the server has no {self.completions_path} (HTTP {r.status_code}): the suite's messages went to "
                f"{self.chat_path}, rendered by the server's own chat template, so the prompt token ids were not "
                "oracle's and could not be checked")

    @property
    def path(self) -> str:
        return self.chat_path if self.route == "chat" else self.completions_path

    # -- generation (async) ------------------------------------------------------
    def request_body(self, request: CompletionRequest) -> dict:
        body = {
            "model": self.model_name(),
            "prompt": list(request.prompt_ids),
            "max_tokens": request.max_tokens,
            "temperature": 0.0,
            "seed": request.seed,
            "stream": True,
            "stream_options": {"include_usage": True},
            # Extensions some servers know, ignored by the others:
            "return_token_ids": True,  # vLLM: choices[].token_ids, prompt_token_ids
            "cache_prompt": False,  # llama.cpp: no slot prompt-cache reuse
            "cache_salt": uuid.uuid4().hex,  # vLLM: no prefix-cache hit across requests
        }
        if self.route == "chat":
            del body["prompt"]
            body["messages"] = [dict(m) for m in request.messages]
            if request.logprobs:
                body["logprobs"], body["top_logprobs"] = True, request.logprobs
            return body
        if request.logprobs:
            body["logprobs"] = request.logprobs
        return body

    def one_shot(self, request: CompletionRequest) -> tuple[str, dict] | None:
        """The text route's request, not streamed (the chat route needs the suite's messages: None)."""
        if self.route == "chat":
            return None
        body = {**self.request_body(request), "stream": False}
        body.pop("stream_options", None)
        return self.path, body

    def one_shot_ids(self, answer: dict) -> tuple[list[int], str]:
        """vLLM's `choices[0].token_ids` (return_token_ids); a server without them gives no ids."""
        chunk = parse_object(answer, OpenAIChunk, where=f"POST {self.path}")
        choice = chunk.choices[0] if chunk.choices else OpenAIChoice()
        return list(choice.token_ids or []), choice.text or ""

    def _refused(self, status: int, detail: str, request: CompletionRequest, *, after: int | None = None
                 ) -> RequestFailed:
        """A refused request: an HTTP error (after None), or an error event in the stream after `after` tokens
        (status: the event's code, 0 without one). A family overrides it to name its own fix."""
        if after is None:
            return refused(status, detail, route=self.path)
        return error_event(detail, route=self.path, after=after)

    async def complete(self, client: StreamClient | httpx.AsyncClient, request: CompletionRequest) -> Completion:
        body = self.request_body(request)
        out = Completion(completion_ids=[], finish_reason="")
        start = time.perf_counter()
        last = start  # the last event's arrival: how long the server had been silent at a deadline
        text: list[str] = []
        finish: str | None = None
        done, counted = False, None
        where = f"POST {self.path}"
        ids, first_token, decode = out.completion_ids, request.first_token, decoder(OpenAIChunk).decode
        try:
            async with asyncio.timeout(self._timeout.read), client.stream("POST", self.path, json=body) as r:
                if r.status_code != 200:
                    raise self._refused(r.status_code, (await r.aread()).decode(errors="replace"), request)
                async with aclosing(sse_batches(r.aiter_bytes())) as batches:
                    async for arrived, payloads in batches:  # one step per network read; its events share its time
                        last, now = arrived, arrived - start
                        for payload in payloads:
                            if payload == DONE or payload.strip() == DONE:
                                done = True
                                break
                            try:
                                chunk = decode(payload)
                            except msgspec.DecodeError:  # NaN, wrong shapes, not JSON: worded by parse
                                chunk = parse(payload, OpenAIChunk, where=where)
                            if chunk.error is not UNSET:
                                error = chunk.error
                                code = error.get("code") if isinstance(error, dict) else None
                                raise self._refused(code if isinstance(code, int) else 0,
                                                    json.dumps({"error": error}), request, after=len(ids))
                            finish = self._take_chunk(out, chunk, now, text) or finish
                            counted = chunk.usage.completion_tokens if chunk.usage else counted
                            if len(ids) > request.max_tokens:
                                check_count(len(ids), request, where=where)
                            if first_token is not None and out.token_times_s:
                                first_token.set()
                                first_token = None
                        if done:
                            break
        except TimeoutError as exc:
            raise overdue(url=f"{self.base_url}{self.path}", after=len(out.completion_ids),
                          total_s=self._timeout.read, silent_s=time.perf_counter() - last) from exc
        except (httpx.HTTPError, httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as exc:
            raise broken(exc, url=f"{self.base_url}{self.path}", after=len(out.completion_ids),
                         read_timeout_s=self._timeout.read) from exc
        except MalformedEvent as exc:
            raise malformed(exc, route=self.path, after=len(out.completion_ids)) from exc
        if not done or finish is None:
            raise RequestFailed(f"POST {self.path}: the stream ended without its finish reason and "
                                f"[DONE] after {len(out.completion_ids)} tokens (server died or connection cut)")
        out.text = "".join(text)
        out.finish_reason = check_stop(finish, STOP_REASONS["openai"], engine="finish_reason", where=where)
        if ids_short(out, counted):  # ids for only some tokens do not spell the text: compared on text (above)
            out.completion_ids, out.logprobs, out.top_ids, out.top_logprobs, out.tail_mass = [], [], [], [], []
        if out.text and not out.completion_ids:
            out.ids_source = IDS_FROM_TEXT  # token_times_s then holds one time per streamed text piece
        if out.system_fingerprint:
            self._fingerprints.add(out.system_fingerprint)
        out.ttft_s = out.token_times_s[0] if out.token_times_s else None
        return out

    def _take_chunk(self, out: Completion, chunk: OpenAIChunk, now: float, text: list[str]) -> str | None:
        """One streamed chunk into the completion, its tokens at time `now`; its finish reason, if any."""
        finish = None
        if chunk.system_fingerprint:
            out.system_fingerprint = chunk.system_fingerprint
        details = chunk.usage.prompt_tokens_details if chunk.usage else None
        if details is not None and details.cached_tokens is not None:
            out.cached_prompt_tokens = details.cached_tokens
        if chunk.timings:  # llama-server's OpenAI routes add its own clock to the last chunk
            out.server_timings = server_timings(chunk.timings.as_dict()) or out.server_timings
        for choice in chunk.choices:
            piece = (choice.delta.content or "") if choice.delta is not None else (choice.text or "")
            text.append(piece)
            if choice.prompt_token_ids is not None and self.route != "chat":
                out.prompt_ids = list(choice.prompt_token_ids)
            take_tokens(out, choice, piece, now, self._key_to_id)
            finish = choice.finish_reason or finish
        return finish

    def _key_to_id(self, key: str) -> int | None:
        """A top-k key that is a token string, as an id: by the served model's tokenizer when it encodes the
        string to exactly one token; else None (never guessed)."""
        if self._key_tokenizer is None:
            path = self.tokenizer_path()
            if path is None:
                return None
            from tokenizers import Tokenizer

            self._key_tokenizer = Tokenizer.from_file(str(path))
        ids = self._key_tokenizer.encode(key, add_special_tokens=False).ids
        return ids[0] if len(ids) == 1 else None

FAMILY = FamilyDescriptor(name="openai", help="any OpenAI-compatible server", backend=OpenAIBackend)
