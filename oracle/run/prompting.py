"""Render suite prompts with the model's chat template and tokenize them into exact ids.

Every backend is then sent the same token ids. A local `tokenizers` file is used when
given (`--tokenizer`); otherwise the server's own tokenizer endpoint.

    rendered = render_suite(suite, template, tokenize, special_tokens)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from oracle.run.suite import Prompt, Suite

__all__ = ["ChatTemplateError", "RenderedPrompt", "render_messages", "render_suite", "render_text", "template_sha256"]


@dataclass(frozen=True)
class RenderedPrompt:
    prompt: Prompt
    text: str
    ids: tuple[int, ...]

    @property
    def id(self) -> str:
        return self.prompt.id


def template_sha256(template: str | None) -> str | None:
    return hashlib.sha256(template.encode()).hexdigest() if template else None


class ChatTemplateError(ValueError):
    """The server's chat template cannot render the suite's messages; the message says why and how to fix it."""


_TEMPLATE_FIX = ("fix the chat template the server serves (llama-server --chat-template-file FILE, vLLM "
                 "--chat-template FILE)")


def render_messages(template: str, messages: list[dict], special_tokens: dict[str, str]) -> str:
    """Render like transformers' apply_chat_template(add_generation_prompt=True); ChatTemplateError when the
    template (the server's /props chat_template, or its model folder's) is not valid Jinja or fails to render."""
    from jinja2.exceptions import TemplateError, TemplateSyntaxError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime(2026, 1, 1).strftime(fmt)  # fixed: prompts must not drift
    try:
        compiled = env.from_string(template)
    except TemplateSyntaxError as exc:
        raise ChatTemplateError(f"the server's chat template is not valid Jinja ({exc.message or exc} at line "
                                f"{exc.lineno}); {_TEMPLATE_FIX}") from None
    except (TemplateError, RecursionError, MemoryError, ValueError, TypeError) as exc:
        raise ChatTemplateError(f"the server's chat template is not valid Jinja ({type(exc).__name__}: "
                                f"{str(exc)[:200]}); {_TEMPLATE_FIX}") from None
    try:
        return compiled.render(messages=messages, add_generation_prompt=True, **special_tokens)
    except Exception as exc:  # noqa: BLE001 - the server's own code, run in a sandbox: whatever it raises is its
        raise ChatTemplateError(f"the server's chat template fails on the suite's messages ({type(exc).__name__}: "
                                f"{str(exc)[:200]}); {_TEMPLATE_FIX}") from None


def _fallback_chatml(messages: list[dict]) -> str:
    parts = [f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages]
    return "".join(parts) + "<|im_start|>assistant\n"


def render_text(template: str | None, messages: list[dict], special_tokens: dict[str, str] | None = None) -> str:
    """The prompt text for messages: the chat template when the server has one, else ChatML."""
    msgs = [dict(m) for m in messages]
    return render_messages(template, msgs, special_tokens or {}) if template else _fallback_chatml(msgs)


def render_suite(suite: Suite, template: str | None, tokenize: Callable[[str], list[int]],
                 special_tokens: dict[str, str] | None = None) -> list[RenderedPrompt]:
    out = []
    for p in suite.prompts:
        text = render_text(template, list(p.messages), special_tokens)
        out.append(RenderedPrompt(prompt=p, text=text, ids=tuple(tokenize(text))))
    return out
