"""vLLM's OpenAI server on any platform (`vllm-xpu`, `vllm-cuda`, `vllm-rocm`, `vllm-cpu`).

The OpenAI family's streamed `/v1/completions`, plus what vLLM offers for proof:
`return_token_ids` (ids of every piece and the prompt ids it saw), `return_tokens_as_token_ids`
(top-k keys as `token_id:N`), a unique `cache_salt` per request (vLLM has no per-request switch
that turns the prefix cache off; a salt no other request shares cannot hit), per-request
`usage.prompt_tokens_details.cached_tokens` (only with `--enable-prompt-tokens-details`), and the
`vllm:` counters of `/metrics` (prefix-cache queries and hits, drafts, draft tokens, accepted
tokens, accepted per draft position). Gated servers should run with `--no-enable-prefix-caching`.
"""

from __future__ import annotations

import re
import uuid

import httpx

from oracle.backends.base import (CacheEvidence, Capabilities, Completion, CompletionRequest, OnePassPrefill,
                                  PrefillChunk, RequestFailed, TeacherForced, status_words)
from oracle.backends.family import FamilyDescriptor
from oracle.backends.faults import MalformedEvent
from oracle.backends.launch_settings import launch_setting
from oracle.backends.openai import OpenAIBackend
from oracle.backends.schemas import AnswerBroken, ScoredAnswer, parse

__all__ = ["FAMILY", "VLLMBackend", "VLLM_CPU_MAX_NUM_BATCHED_TOKENS", "VLLM_MAX_LOGPROBS"]

VLLM_MAX_LOGPROBS = 20  # vLLM's default --max-logprobs
# vLLM CPU's default token budget per scheduler step for its OpenAI server (2048 x world size; arg_utils.py
# get_batch_defaults). On GPUs it depends on the device's memory, so there oracle does not assume one.
VLLM_CPU_MAX_NUM_BATCHED_TOKENS = 2048


class VLLMBackend(OnePassPrefill, OpenAIBackend):
    family = "vllm"
    teacher_forcing_method = ("vllm: prompt_logprobs of one /v1/completions request whose prompt is the whole path "
                              "(max_tokens 1, its own cache_salt)")
    capabilities = Capabilities(
        cache=CacheEvidence(
            policy="a unique cache_salt per request (vLLM has no per-request cache switch; gate servers with "
                   "--no-enable-prefix-caching)",
            counters_hint="vLLM's /metrics (vllm:prefix_cache_hits_total)",
            per_request_hint="start vLLM with --enable-prompt-tokens-details for per-request cached_tokens",
            counters_suffice=True),
        load_gauge=True, served_tokenizer=True, served_context="vLLM /v1/models max_model_len",
        teacher_forcing=teacher_forcing_method, prefill_scoring=teacher_forcing_method,
        prefill_chunk="--max-num-batched-tokens in the launch command, else vLLM CPU's default 2048",
        preemption_counter="vLLM /metrics vllm:num_preemptions_total",
        fixed_length="vLLM ignore_eos: true with min_tokens = max_tokens")
    chunking_refusal = ("vLLM splits a prompt by its --max-num-batched-tokens (chunked prefill), a launch "
                        "setting: launch the candidate with --max-num-batched-tokens C to measure chunks of C")

    def prefill_chunk(self, launch_command: str | None) -> PrefillChunk:
        """vLLM's scheduler gives each step at most --max-num-batched-tokens tokens (chunked prefill, on by
        default in V1): a longer prompt is prefilled over several steps. vLLM's API does not state the budget."""
        flag = "--max-num-batched-tokens"
        given = launch_setting(launch_command, (flag,))
        if given is not None:
            try:
                return PrefillChunk(int(given[0]), given[1], flag)
            except ValueError:
                return PrefillChunk(None, f"{given[1]}: not a whole number", flag)
        if launch_command is None:
            return PrefillChunk(None, "vLLM's API does not state max_num_batched_tokens and a --oracle-url server's flags "
                                "are not visible to oracle: start it with --launch (or the embedded default)", flag)
        if self.platform == "cpu":
            return PrefillChunk(VLLM_CPU_MAX_NUM_BATCHED_TOKENS, f"vLLM CPU's default {flag} "
                                f"{VLLM_CPU_MAX_NUM_BATCHED_TOKENS} (not in the launch command)", flag)
        return PrefillChunk(None, f"{flag} is not in the launch command and vLLM's default depends on the device: "
                            f"give {flag} N in the launch command", flag)

    def request_body(self, request: CompletionRequest) -> dict:
        body = super().request_body(request)
        body.pop("cache_prompt")  # llama.cpp's field; vLLM would log it as unknown
        body["return_tokens_as_token_ids"] = True
        if request.ignore_eos:
            body["ignore_eos"], body["min_tokens"] = True, request.max_tokens
        return body

    def _refused(self, status: int, detail: str, request: CompletionRequest, *, after: int | None = None
                 ) -> RequestFailed:
        if status == 400 and "logprobs" in detail and request.logprobs > VLLM_MAX_LOGPROBS:
            return RequestFailed(
                f"vLLM refused --logprobs {request.logprobs}: it returns at most {VLLM_MAX_LOGPROBS} top logprobs "
                f"unless the server is started with --max-logprobs N (N >= {request.logprobs}); lower --logprobs "
                f"or restart vLLM with --max-logprobs {request.logprobs} ({detail[:200]})")
        return super()._refused(status, detail, request, after=after)

    async def complete(self, client, request: CompletionRequest) -> Completion:
        out = await super().complete(client, request)
        if out.prompt_ids is None or (out.text and out.ids_source != "server"):
            raise RequestFailed("the server sent no token ids although vLLM's return_token_ids was asked for "
                                "(vLLM older than 0.10.2, or not vLLM): upgrade vLLM, or use --backend=openai, "
                                "which compares text when a server gives no ids")
        return out

    def teacher_forced(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int,
                       seed: int = 1234, positions: list[int] | None = None) -> TeacherForced:
        """Top-k logprobs after prompt + completion[:i] for each position i (default: all), in one request: vLLM's
        `prompt_logprobs` row j is the distribution the model gave before the path's token j. It holds the top
        `logprobs` tokens (rank 1..k) and the path's own token (whatever its rank); only the top k are kept."""
        wanted = list(range(len(completion_ids)) if positions is None else positions)
        if not completion_ids or not wanted:
            return TeacherForced([], [], method=self.teacher_forcing_method, requests=0)
        path = [*prompt_ids, *completion_ids]
        body = {"model": self.model_name(), "prompt": path, "max_tokens": 1, "temperature": 0.0, "seed": seed,
                "prompt_logprobs": logprobs, "cache_salt": uuid.uuid4().hex}
        where = f"POST {self.base_url}{self.completions_path} (teacher forcing, prompt_logprobs {logprobs})"
        try:
            r = self._client.post(self.completions_path, json=body, timeout=self._timeout)
        except httpx.HTTPError as exc:
            raise RequestFailed(f"{where}: {type(exc).__name__}: {exc}") from exc
        if r.status_code != 200:
            fix = (f"; vLLM returns at most {VLLM_MAX_LOGPROBS} unless started with --max-logprobs N: lower "
                   "--logprobs or restart it" if logprobs > VLLM_MAX_LOGPROBS else "")
            raise RequestFailed(f"{where}: {status_words(r)}{fix}")
        try:
            answer = parse(r.content, ScoredAnswer, where=where)
        except MalformedEvent as exc:
            raise AnswerBroken(f"{where}: the server's answer is not JSON: {exc}") from None
        rows = answer.choices[0].prompt_logprobs if answer.choices else None
        if rows is None or len(rows) != len(path):
            raise RequestFailed(f"{where}: the answer holds no prompt_logprobs for the {len(path)} path tokens "
                                "(vLLM older than 0.5, or not vLLM): gate logits on this server with the "
                                "reference's path only, or use an engine that teacher-forces")
        top_ids, top_lps = [], []
        for i in wanted:
            ranked = sorted((v.rank, k, v.logprob) for k, v in (rows[len(prompt_ids) + i] or {}).items()
                            if v.rank is not None)
            kept = [(token, lp) for rank, token, lp in ranked if rank <= logprobs][:logprobs]
            top_ids.append([t for t, _ in kept])
            top_lps.append([lp for _, lp in kept])
        details = answer.usage.prompt_tokens_details if answer.usage else None
        return TeacherForced(top_ids, top_lps, method=self.teacher_forcing_method, requests=1,
                             cached_prompt_tokens=details.cached_tokens if details else None)

    def server_identity(self) -> dict:
        identity = super().server_identity()
        identity["server"] = "vllm"
        # vllm:cache_config_info carries the cache settings as labels: whether prefix caching is on, block size.
        text = self._metrics(timeout=5.0) or ""
        line = next((x for x in text.splitlines() if x.startswith("vllm:cache_config_info{")), "")
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
        if labels:
            identity["prefix_caching"] = labels.get("enable_prefix_caching")
            identity["block_size"] = labels.get("block_size")
        return identity


FAMILY = FamilyDescriptor(
    name="vllm", help="vLLM's OpenAI API with its ids, salts and counters", backend=VLLMBackend)
