"""The run's prompt set: which tokenizer it uses, the suite rendered to token ids, decoding, and the check
that its prompt token ids are the reference's.

    prompts = PromptSet.open(suite, backend, tokenizer=options.tokenizer, model_path=target.model_path)
    prompts.rendered; prompts.render_ids(messages); prompts.decode(ids); prompts.check_against(reference)
"""

from __future__ import annotations

from pathlib import Path

from oracle.backends import Backend
from oracle.backends.gguf import GGUFError
from oracle.backends.in_process import LocalTokenizer
from oracle.run.prompting import RenderedPrompt, render_suite, render_text, template_sha256
from oracle.run.suite import Suite

__all__ = ["CHATML_NOTE", "PromptMismatch", "PromptSet"]

CHATML_NOTE = ("the server gave no chat template (for vLLM and OpenAI-compatible servers it is read from the served "
               "model folder, which is not reachable from here): the prompts were rendered as ChatML")


class PromptMismatch(ValueError):
    """The rendered prompts are not the reference's; the message says which and what to do."""


class PromptSet:
    def __init__(self, suite: Suite, backend: Backend, tokenizer: LocalTokenizer | None) -> None:
        self.suite, self.backend, self.tokenizer = suite, backend, tokenizer
        self.template = backend.chat_template()
        self.template_sha256 = template_sha256(self.template)
        self.rendered: list[RenderedPrompt] = render_suite(suite, self.template, self.tokenize,
                                                           backend.special_tokens())

    def use_backend(self, backend: Backend) -> None:
        """After a restart: the server that tokenizes from now on (the one rendered before is gone)."""
        self.backend = backend

    @classmethod
    def open(cls, suite: Suite, backend: Backend, *, tokenizer: str | None, model_path: Path | None) -> "PromptSet":
        """--tokenizer; else the model file's own (a GGUF's byte-level BPE); else the served model folder's; else
        the server's tokenizer endpoint. GGUFError / OSError for a --tokenizer that cannot be read."""
        return cls(suite, backend, _choose_tokenizer(backend, tokenizer, model_path))

    @property
    def notes(self) -> list[str]:
        return [] if self.template is not None else [CHATML_NOTE]

    def tokenize(self, text: str) -> list[int]:
        return self.tokenizer.encode(text) if self.tokenizer else self.backend.tokenize(text)

    def render_ids(self, messages: list[dict], *, suffix: str = "") -> tuple[int, ...]:
        """Messages rendered with the server's chat template, plus suffix, as this run's token ids."""
        return tuple(self.tokenize(render_text(self.template, messages, self.backend.special_tokens()) + suffix))

    def decode(self, ids: list[int]) -> str:
        if self.tokenizer:
            return self.tokenizer.decode(ids)
        try:
            return self.backend.detokenize(ids)
        except Exception:  # the server may be gone (that is why we are describing a failure); ids still say it
            return f"<ids {ids}>"

    def identity(self) -> dict:
        tok = self.tokenizer
        return {"source": tok.source if tok else "server endpoint", "path": str(tok.path) if tok else None,
                "sha256": tok.sha256 if tok else None}

    def beyond_context(self, context: int | None) -> str | None:
        """Why the suite cannot be sent to a server holding `context` tokens per request (a prompt whose tokens and
        max_tokens exceed it), or None (also when the server did not state its context)."""
        if context is None:
            return None
        for p in self.rendered:
            if len(p.ids) + p.prompt.max_tokens > context:
                return (f"prompt {p.id!r} needs {len(p.ids)} prompt tokens + {p.prompt.max_tokens} max_tokens = "
                        f"{len(p.ids) + p.prompt.max_tokens}, beyond the server's context of {context} tokens per "
                        "request; nothing was sent; shorten the prompt or its max_tokens (--max-tokens N), or start "
                        "the server with a larger context (llama-server -c, vLLM --max-model-len)")
        return None

    def check_against(self, reference) -> None:
        """PromptMismatch unless every rendered prompt is in the reference with the same prompt token ids."""
        cases = reference.manifest["cases"]
        extra = [p.id for p in self.rendered if p.id not in cases]
        if extra:
            raise PromptMismatch(f"prompt {extra[0]!r} is not in the reference {reference.path}: the suite changed "
                                 "since it was recorded; gate with the suite it was recorded with, or re-record the "
                                 "reference")
        for p in self.rendered:
            ref_ids = reference.record(p.id).prompt_ids
            if list(p.ids) != ref_ids:
                i = next((k for k, (a, b) in enumerate(zip(p.ids, ref_ids)) if a != b), min(len(p.ids), len(ref_ids)))
                raise PromptMismatch(
                    f"prompt-token mismatch for {p.id!r}: this run renders {len(p.ids)} prompt tokens, the reference "
                    f"{len(ref_ids)}, first different at token {i}. The suite, chat template or tokenizer changed; "
                    "gate with the same template and tokenizer, or re-record the reference")


def _choose_tokenizer(backend: Backend, given: str | None, model_path: Path | None) -> LocalTokenizer | None:
    if given:
        return LocalTokenizer(given)
    if model_path is not None and model_path.is_file():
        try:
            return LocalTokenizer(model_path)
        except (GGUFError, OSError):
            return None
    served = backend.tokenizer_path() if backend.capabilities.served_tokenizer else None
    return LocalTokenizer(served) if served else None
