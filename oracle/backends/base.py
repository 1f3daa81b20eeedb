"""The one small protocol every backend implements, and what it returns.

A backend speaks one protocol family (llama.cpp's native API, vLLM's OpenAI API, ...)
to one server. It completes token-id prompts greedily, reports the server's identity
and its cache / speculation counters. Starting and stopping servers is `target`'s job.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

__all__ = ["API_KEY_VARIABLE", "Backend", "BackendBase", "CacheEvidence", "Capabilities", "Completion",
           "CompletionRequest", "Counters", "DEFAULT_TIMEOUT", "IDS_FROM_SERVER", "IDS_FROM_TEXT", "OnePassPrefill",
           "PrefillChunk", "RequestFailed", "RouteMissing", "STOP_REASONS", "TEXT_DOWNGRADE", "TeacherForced",
           "auth_headers", "context_tokens", "request_timeout", "server_timings", "status_words", "stop_reason"]

# Generation can take minutes on a slow CPU; connecting must not.
DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)


def request_timeout(seconds: float) -> httpx.Timeout:
    """Per-read timeout for streamed generation: a server silent this long counts as hung."""
    return httpx.Timeout(seconds, connect=min(10.0, seconds))


API_KEY_VARIABLE = "ORACLE_API_KEY"


def auth_headers() -> dict[str, str]:
    """`Authorization: Bearer $ORACLE_API_KEY` on every request when it is set (a server started with --api-key);
    a --oracle-url with user:password sends those instead (httpx takes them from the URL). Neither is ever written."""
    key = os.environ.get(API_KEY_VARIABLE)
    return {"Authorization": f"Bearer {key}"} if key else {}


def status_words(response: httpx.Response) -> str:
    """`HTTP 401: <body>`, with the fix named when the server wants a key."""
    words = f"HTTP {response.status_code}: {response.text[:200]}"
    if response.status_code in (401, 403):
        words += (f" (the server wants an API key: set {API_KEY_VARIABLE} to it, or give --oracle-url "
                  "http://user:password@host:port)")
    return words


class RequestFailed(RuntimeError):
    """A request did not complete: refused, timed out, truncated or answered with an error.

    Never retried silently: the run stops and keeps what it has.
    """


class RouteMissing(RequestFailed):
    """The server has no such route (HTTP 404, 405 or 501): an optional request it cannot answer, not a fault."""


# Each engine's stop reasons -> the one vocabulary of records: "stop" (end of generation or a stop
# word) or "length" (max_tokens reached). Anything else (vLLM's "abort", ...) fails the request.
STOP_REASONS: dict[str, dict[str, str]] = {
    "llamacpp": {"eos": "stop", "word": "stop", "limit": "length", "none": "stop"},  # /completion stop_type
    "openai": {"stop": "stop", "length": "length", "eos": "stop"},  # finish_reason (vLLM, llama.cpp, ...)
}


def stop_reason(engine: str, value: str | None) -> str:
    """The record's finish reason for an engine's stop reason; RequestFailed for one that is not an ending."""
    table = STOP_REASONS[engine]
    if value not in table:
        raise RequestFailed(f"the server ended the request with {engine} stop reason {value!r}, which is neither "
                            f"a stop nor the length limit (known: {', '.join(sorted(table))})")
    return table[value]


def context_tokens(value) -> int | None:
    """A context length as a server states it: a positive whole number, else None (it did not say)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


SERVER_TIMING_KEYS = ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "predicted_per_second")


def server_timings(timings) -> dict | None:
    """The server's own clock for one request, as llama.cpp's final `timings` states it (the numeric keys the speed
    card reads); None when the server sent none."""
    if not isinstance(timings, dict):
        return None
    kept = {k: timings[k] for k in SERVER_TIMING_KEYS
            if isinstance(timings.get(k), (int, float)) and not isinstance(timings.get(k), bool)}
    return kept if "predicted_ms" in kept or "predicted_per_second" in kept else None


IDS_FROM_SERVER = "server"  # completion token ids as the server returned them
IDS_FROM_TEXT = "text"  # the server returned no ids: only the text can be compared
TEXT_DOWNGRADE = "compared text, not token ids: the server returned no ids"


@dataclass(frozen=True)
class CompletionRequest:
    prompt_ids: tuple[int, ...]
    max_tokens: int
    logprobs: int
    seed: int = 1234
    temperature: float | None = None  # None: greedy; else sampled with top_p (and top_k 0, min_p 0: nothing else)
    top_p: float = 1.0
    messages: tuple[dict, ...] = ()  # the suite's messages, for a server that only has a chat route
    ignore_eos: bool = False  # generate exactly max_tokens (speed cells), where `Capabilities.fixed_length` says how
    # Set by a streaming backend when the first token has arrived (staggered ladder arrivals wait on it).
    first_token: Any = field(default=None, compare=False, repr=False)


@dataclass
class Completion:
    completion_ids: list[int]
    finish_reason: str  # "stop" (end of generation / stop word) or "length"
    text: str = ""
    logprobs: list[float] = field(default_factory=list)
    top_ids: list[list[int]] = field(default_factory=list)
    top_logprobs: list[list[float]] = field(default_factory=list)
    prompt_ids: list[int] | None = None  # as echoed by the server, when it does
    cached_prompt_tokens: int | None = None
    drafted: int | None = None
    accepted: int | None = None
    ttft_s: float | None = None
    token_times_s: list[float] = field(default_factory=list)
    ids_source: str = IDS_FROM_SERVER
    system_fingerprint: str | None = None
    tail_mass: list[float] = field(default_factory=list)  # 1 - sum of the top-k probabilities, when known exactly
    # The server's own clock for this request (llama.cpp's final `timings`: prompt_n, prompt_ms, predicted_n,
    # predicted_ms, predicted_per_second); None when it reports none. The speed card checks the client's against it.
    server_timings: dict | None = None
    prompt_logprobs: list[float] = field(default_factory=list)  # log p(prompt[i] | prompt[:i]), i >= 1, when known
    # Per position, log-sum-exp of the raw logits (raw = logprob + shift): backends that hold raw logits, whole vocab
    logit_shift: list[float] = field(default_factory=list)


@dataclass
class TeacherForced:
    """A backend's top-k logprobs at every completion position of a given token path (teacher forcing).

    Row i is the distribution after prompt + completion[:i]; `method` names how it was obtained,
    `cached_prompt_tokens` how many prompt tokens the server's cache supplied (None: no cache involved).
    """

    top_ids: list[list[int]]
    top_logprobs: list[list[float]]
    method: str
    requests: int = 0
    cached_prompt_tokens: int | None = None
    path_logprobs: list[float] = field(default_factory=list)  # `scored_path`: each given token's own logprob
    logit_shift: list[float] = field(default_factory=list)  # per row, as Completion.logit_shift (empty: unknown)


@dataclass(frozen=True)
class Counters:
    """Server-wide counters read from /metrics; None where the server does not expose one."""

    prompt_tokens_cached: float | None = None
    prefix_cache_hits: float | None = None
    prefix_cache_queries: float | None = None
    drafts: float | None = None
    draft_tokens: float | None = None
    accepted_tokens: float | None = None
    accepted_per_position: tuple[float, ...] | None = None  # accepted draft tokens at draft position 0, 1, ...
    tokens_generated: float | None = None  # every token the server generated (llama.cpp, vLLM), all requests
    preemptions: float | None = None  # requests the scheduler preempted (vLLM), for the preemption condition

    def delta(self, before: "Counters") -> "Counters":
        def d(name):
            a, b = getattr(self, name), getattr(before, name)
            if a is None or b is None:
                return None
            if isinstance(a, tuple):
                width = max(len(a), len(b))
                a, b = a + (0.0,) * (width - len(a)), b + (0.0,) * (width - len(b))
                return tuple(x - y for x, y in zip(a, b))
            return a - b
        return Counters(**{k: d(k) for k in self.__dataclass_fields__})

    def as_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k in self.__dataclass_fields__
                for v in [getattr(self, k)]}


@dataclass(frozen=True)
class CacheEvidence:
    """How a family keeps requests off the prefix cache, and where the missing proof would come from."""

    policy: str  # what each request sends so that no request reuses another's cached prompt
    counters_hint: str  # how to get the server's counters
    per_request_hint: str | None = None  # how to get the per-request cached-token field
    counters_suffice: bool = False  # counter deltas alone prove cache-zero (the server has no per-request field)


@dataclass(frozen=True)
class PrefillChunk:
    """The most prompt tokens the server computes in one step: a longer prompt is prefilled in chunks.

    tokens: None when it cannot be told; source: where it was read (or why it is unknown); flag: the server
    setting that changes it, for the message that says how to cause chunked prefill."""

    tokens: int | None
    source: str
    flag: str = ""

    def as_json(self) -> dict:
        return {"tokens": self.tokens, "source": self.source, "flag": self.flag}


@dataclass(frozen=True)
class Capabilities:
    """What a backend offers beyond the protocol's core; callers read these, never probe for methods.

    teacher_forcing: how it scores a fixed token path (None: it cannot); load_gauge: it reports how many
    requests run right now; served_tokenizer: it can point to the served model's tokenizer file;
    route_choice: it must pick its completion route before the first request; in_process: no server;
    served_context: where it reads the context the server really has, per request (None: it cannot tell);
    concurrent: requests sent together really run together (a ladder can be measured); restartable: a new
    boot can be made (for a server: its target restarts it; in process: a fresh load); precision_floor: the
    same weights load again in another dtype (an f16 reference's precision floor, --floor-dtype);
    top_logprobs_gaps: why the server may send no top-k logprobs at some positions (said beside the count).
    prefill_scoring: how it scores a fixed path as a prompt, every position from a prefill and none from a decode
    step (None: it cannot; decode vs prefill is then not offered).
    prefill_chunk: where it reads the most prompt tokens one step computes (None: it cannot tell);
    preemption_counter: the server counter of preempted requests (None: it has none).
    prompt_logprobs: its completions carry the prompt's own log-probs (teacher-forced over the prompt), for the
    prompt-logprob item; chunked_prefill: it feeds a path as a prompt in chunks of any size, so the chunked-prefill
    item (chunks against one pass) is collected for it.
    fixed_length: how it generates exactly max_tokens past the end of sequence when a request asks
    (`CompletionRequest.ignore_eos`; None: it cannot, a completion may stop early).
    sampling: how it samples with a seed per request and scores a sampled path's own tokens (`scored_path`)
    (None: greedy only; --temperature is refused).
    """

    cache: CacheEvidence
    teacher_forcing: str | None = None
    prefill_scoring: str | None = None
    served_context: str | None = None
    load_gauge: bool = False
    served_tokenizer: bool = False
    route_choice: bool = False
    in_process: bool = False
    concurrent: bool = True
    restartable: bool = True
    precision_floor: bool = False
    top_logprobs_gaps: str | None = None
    prefill_chunk: str | None = None
    preemption_counter: str | None = None
    prompt_logprobs: bool = False
    chunked_prefill: bool = False
    fixed_length: str | None = None
    sampling: str | None = None


class Backend(Protocol):
    family: str
    platform: str
    base_url: str
    capabilities: Capabilities

    # `client`: what the backend's own `async_client` gave (the HTTP families: http_stream.StreamClient).
    async def complete(self, client, request: CompletionRequest) -> Completion: ...

    def chat_template(self) -> str | None: ...

    def special_tokens(self) -> dict[str, str]: ...

    def tokenize(self, text: str) -> list[int]: ...

    def detokenize(self, ids: list[int]) -> str: ...

    def server_identity(self) -> dict: ...

    def counters(self) -> Counters | None: ...

    def healthy(self) -> bool: ...

    def async_client(self, *, connections: int = 1): ...  # an async context manager

    # Offered as declared in `capabilities` (BackendBase answers "not offered" for each). What one check alone
    # needs is no method here but a small protocol in that check's package, which a backend that offers it
    # implements: `logits.path.TeacherForcing` (teacher_forced), `PrefillScorer` (prefill_forced,
    # prefill_chunking: checks/decode_vs_prefill/scorer.py), `PathScorer` (scored_path:
    # checks/sampling_distribution/scorer.py).
    def load(self) -> int | None: ...

    def speculative_config(self) -> str | None: ...

    def tokenizer_path(self): ...

    def choose_route(self) -> str | None: ...

    def system_fingerprints(self) -> list[str]: ...

    def served_context(self) -> int | None: ...

    def vocab_size(self) -> int | None: ...

    def prefill_chunk(self, launch_command: str | None) -> PrefillChunk: ...

    def one_shot(self, request: CompletionRequest) -> tuple[str, dict] | None: ...

    def one_shot_ids(self, answer: dict) -> tuple[list[int], str]: ...


class BackendBase:
    """The optional part of the protocol, as "not offered": a backend overrides what its capabilities declare."""

    # Why decode vs prefill is not offered, where `capabilities.prefill_scoring` is None.
    prefill_refusal = "it cannot score a path as a prompt"

    def load(self) -> int | None:
        return None

    def speculative_config(self) -> str | None:
        return None

    def tokenizer_path(self):
        return None

    def choose_route(self) -> str | None:
        return None

    def system_fingerprints(self) -> list[str]:
        return []

    def served_context(self) -> int | None:
        return None

    def vocab_size(self) -> int | None:
        """How many ids the vocabulary has, as the server states it (None: it does not; ids are then only checked
        to be non-negative)."""
        return None

    def prefill_chunk(self, launch_command: str | None) -> PrefillChunk:
        return PrefillChunk(None, f"the {self.family} backend does not say how many prompt tokens one step computes")

    def one_shot(self, request: CompletionRequest) -> tuple[str, dict] | None:
        """The route and JSON body of `request` sent once, not streamed: what a `curl` command repeats (`oracle
        repro`); None when the backend has no such HTTP request (in process)."""
        return None

    def one_shot_ids(self, answer: dict) -> tuple[list[int], str]:
        """(completion token ids, text) of the answer to `one_shot`'s request."""
        raise RequestFailed(f"the {self.family} backend has no one-shot request to read")


class OnePassPrefill:
    """For a backend whose teacher forcing is already one prefill over the whole path (hf, OpenVINO, vLLM's
    prompt_logprobs): that is its prefill scoring; chunks of a chosen size are not offered, `chunking_refusal`
    says why."""

    chunking_refusal = "this backend scores a path in one pass only"

    def prefill_forced(self, prompt_ids, completion_ids, *, logprobs, seed=1234, positions=None,
                       chunk=None) -> TeacherForced:
        if chunk is not None:
            raise RequestFailed(self.chunking_refusal)
        return self.teacher_forced(prompt_ids, completion_ids, logprobs=logprobs, seed=seed, positions=positions)

    def prefill_chunking(self, chunk: int) -> str | None:
        return self.chunking_refusal
