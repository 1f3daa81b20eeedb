"""The declared shapes of every server answer oracle reads: llama-server's streamed and scoring /completion events,
its /props, /tokenize, /detokenize, the OpenAI-compatible stream chunks and /v1/models (msgspec structs).

    event = parse(payload, LLAMA_EVENT, where="POST /completion")   # a LlamaEvent, or AnswerBroken naming the field

Fields a server adds and oracle does not read are ignored; a field oracle reads that has another type (a list for
an object, a string for an id, a negative id, null where a number must be) is an `AnswerBroken` that names the
endpoint, the field and the value. Decoding straight from the bytes into structs is also the stream's hot path:
the streamed events' structs are `gc=False` (decoded JSON holds no cycles), so the collector never walks the
hundreds of thousands of them a fast stream makes each second.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, TypeVar

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from oracle.backends.base import RequestFailed
from oracle.backends.faults import MalformedEvent

__all__ = ["AnswerBroken", "parse_answer", "ChatDelta", "ContentLogprob", "ContentTop", "Detokenized", "LlamaEvent", "LlamaTimings", "ModelList", "OpenAIChoice",
           "OpenAIChunk", "OpenAILogprobs", "Props", "RankedLogprob", "ScoredAnswer", "ScoredChoice", "ServedModel", "TokenId", "TokenLogprob", "TokenPiece",
           "Tokenized", "TopLogprob", "UNSET", "decoder", "parse", "parse_object"]

T = TypeVar("T")
VALUE_CHARS = 80  # of a wrong value quoted in the message

TokenId = Annotated[int, Meta(ge=0)]  # a vocabulary index: a whole number, never negative


class AnswerBroken(RequestFailed):
    """A server answer that breaks its schema or the request it answers (more tokens than asked, an id outside the
    vocabulary, an unknown stop type, a wrong-shaped event): the run stops `not-run`, never `divergent`, and a
    record run seals no reference from it."""


# -- llama-server ---------------------------------------------------------------------------------------------
class TopLogprob(Struct, gc=False):
    id: TokenId
    logprob: float


class TokenLogprob(Struct, gc=False):
    logprob: float | None = None  # null where the server could not state it (-inf)
    top_logprobs: list[TopLogprob] = []


class LlamaTimings(Struct, gc=False):
    cache_n: int | UnsetType = UNSET
    prompt_n: int | UnsetType = UNSET
    prompt_ms: float | UnsetType = UNSET
    predicted_n: int | UnsetType = UNSET
    predicted_ms: float | UnsetType = UNSET
    predicted_per_second: float | UnsetType = UNSET
    draft_n: int | UnsetType = UNSET
    draft_n_accepted: int | UnsetType = UNSET

    def as_dict(self) -> dict:
        return {k: v for k in self.__struct_fields__ if (v := getattr(self, k)) is not UNSET}


class LlamaEvent(Struct, gc=False):
    """One /completion event (streamed), or the whole non-streamed answer."""
    content: str = ""
    tokens: list[TokenId] = []
    completion_probabilities: list[TokenLogprob] = []
    stop: bool = False
    stop_type: str | UnsetType = UNSET
    timings: LlamaTimings | UnsetType = UNSET
    tokens_cached_prompt: int | None = None
    error: Any = UNSET  # an error event: the server's own words (faults.server_message reads them)


class GenerationSettings(Struct):
    n_ctx: int | None = None
    n_batch: int | None = None
    n_ubatch: int | None = None
    params: dict[str, Any] = {}


class Props(Struct):
    """llama-server's GET /props. Every llama-server states its default generation settings (where its context
    is read): an answer without them is not llama-server's, and is refused at start."""
    default_generation_settings: GenerationSettings
    chat_template: str | None = None
    bos_token: str = ""
    eos_token: str = ""
    build_info: str | None = None
    model_path: str | None = None
    total_slots: int | None = None
    n_batch: int | None = None
    n_ubatch: int | None = None


class TokenPiece(Struct):
    id: TokenId


class Tokenized(Struct):
    """POST /tokenize: ids, or pieces with ids (llama-server with with_pieces)."""
    tokens: list[TokenId | TokenPiece]

    def ids(self) -> list[int]:
        return [t if isinstance(t, int) else t.id for t in self.tokens]


class Detokenized(Struct):
    """POST /detokenize: llama-server's `content`, vLLM's `prompt`."""
    content: str | None = None
    prompt: str | None = None


# -- OpenAI-compatible ----------------------------------------------------------------------------------------
class ChatDelta(Struct, gc=False):
    content: str | None = None


class ContentTop(Struct, gc=False):
    logprob: float
    id: TokenId | UnsetType = UNSET


class ContentLogprob(Struct, gc=False):
    """llama.cpp's per-token logprob object (OpenAI chat shape, with ids)."""
    logprob: float | None = None
    id: TokenId | UnsetType = UNSET
    top_logprobs: list[ContentTop] = []


class OpenAILogprobs(Struct, gc=False):
    content: list[ContentLogprob] | None = None
    tokens: list[str] | None = None
    token_logprobs: list[float | None] | None = None
    top_logprobs: list[dict[str, float] | None] | None = None


class OpenAIChoice(Struct, gc=False):
    text: str | None = None
    delta: ChatDelta | None = None
    token_ids: list[TokenId] | None = None
    prompt_token_ids: list[TokenId] | None = None
    logprobs: OpenAILogprobs | None = None
    finish_reason: str | None = None


class PromptTokensDetails(Struct, gc=False):
    cached_tokens: int | None = None


class Usage(Struct, gc=False):
    prompt_tokens_details: PromptTokensDetails | None = None
    completion_tokens: int | None = None


class OpenAIChunk(Struct, gc=False):
    choices: list[OpenAIChoice] = []
    usage: Usage | None = None
    timings: LlamaTimings | None = None
    system_fingerprint: str | None = None
    error: Any = UNSET


class RankedLogprob(Struct):
    logprob: float
    rank: int | None = None


class ScoredChoice(Struct):
    prompt_logprobs: list[dict[TokenId, RankedLogprob] | None] | None = None


class ScoredAnswer(Struct):
    """vLLM's non-streamed /v1/completions with prompt_logprobs (teacher forcing)."""
    choices: list[ScoredChoice] = []
    usage: Usage | None = None


class ModelMeta(Struct):
    n_vocab: int | None = None


class ServedModel(Struct):
    id: str
    root: str | None = None
    max_model_len: int | None = None
    owned_by: str | None = None
    meta: ModelMeta | None = None


class ModelList(Struct):
    """GET /v1/models."""
    data: list[ServedModel]


# -- parsing at the edge -------------------------------------------------------------------------------------
_DECODERS: dict[type, msgspec.json.Decoder] = {}


def decoder(shape: type[T]) -> msgspec.json.Decoder:
    """One decoder per shape (they are built once; decoding is the stream's inner loop)."""
    if shape not in _DECODERS:
        _DECODERS[shape] = msgspec.json.Decoder(shape)
    return _DECODERS[shape]


def parse(payload: bytes, shape: type[T], *, where: str) -> T:
    """The answer's bytes as `shape`; MalformedEvent for bytes that are not UTF-8 JSON, AnswerBroken for JSON of
    another shape. JSON with NaN or Infinity (which msgspec refuses) goes through the standard parser."""
    try:
        return decoder(shape).decode(payload)
    except msgspec.ValidationError as exc:
        raise _broken(exc, _plain(payload), where) from None
    except msgspec.DecodeError:
        pass
    try:
        text = payload.decode()
    except UnicodeDecodeError as exc:
        raise MalformedEvent(f"bytes that are not UTF-8 ({exc.reason} at byte {exc.start}): "
                             f"{payload[:VALUE_CHARS]!r}") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedEvent(f"not JSON ({exc}): {payload[:VALUE_CHARS]!r}") from None
    return parse_object(value, shape, where=where)


def parse_object(value, shape: type[T], *, where: str) -> T:
    """An already decoded JSON value as `shape` (an answer httpx parsed), AnswerBroken naming the field."""
    try:
        return msgspec.convert(value, shape)
    except msgspec.ValidationError as exc:
        raise _broken(exc, value, where) from None


def _plain(payload: bytes):
    try:
        return json.loads(payload)
    except ValueError:
        return None


_PATH = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_STEP = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]|\[\.\.\.\]")


def _broken(exc: msgspec.ValidationError, value, where: str) -> AnswerBroken:
    """`where: the server's answer breaks its schema: field tokens[2] = -5 (Expected `int` >= 0)`."""
    words = str(exc)
    m = _PATH.search(words)
    reason = words[:m.start()] if m else words
    path = m.group("path") if m else ""
    found = value
    for step in _STEP.finditer(path):
        name, index = step.group(1), step.group(2)
        if name is None and index is None:  # `[...]`: a value of an object whose key msgspec does not say
            break  # the object itself is shown
        try:
            found = found[name] if name is not None else found[int(index)]
        except (KeyError, IndexError, TypeError, ValueError):
            found = None
            break
    field = path.lstrip(".") or "the answer itself"
    shown = json.dumps(found)[:VALUE_CHARS] if found is not None or path else json.dumps(value)[:VALUE_CHARS]
    if "missing required field" in reason.lower():
        return AnswerBroken(f"{where}: the server's answer breaks its schema: {reason} (in {field})")
    said = f"field {field} = {shown}" if path else f"the answer is {shown}"
    return AnswerBroken(f"{where}: the server's answer breaks its schema: {said} ({reason})")


def parse_answer(content: bytes, shape: type[T], *, where: str) -> T:
    """An administrative (not streamed) answer parsed as its shape; bytes that are not JSON are an AnswerBroken too."""
    try:
        return parse(content, shape, where=where)
    except MalformedEvent as exc:
        raise AnswerBroken(f"{where}: the server's answer is not JSON: {exc}") from None
