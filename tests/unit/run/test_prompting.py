"""A chat template the server serves that is not valid Jinja, or fails on the suite's messages, is a
`ChatTemplateError` naming why and the fix, never a Jinja traceback (#52: INTERNALERROR, exit 3)."""

from __future__ import annotations

import pytest

from oracle.run.prompting import ChatTemplateError, render_text

MESSAGES = [{"role": "user", "content": "Say hi."}]


@pytest.mark.parametrize("template, says", [
    ("{% if %}", "not valid Jinja (Expected an expression"),
    ("{% for m in messages %}{{ m.content }}", "not valid Jinja (Unexpected end of template"),
    ("{{ 1 / 0 }}", "fails on the suite's messages (ZeroDivisionError"),
    ("{{ raise_exception('no system role') }}", "fails on the suite's messages (TemplateError: no system role"),
    ("{{ messages.__class__.__mro__ }}", "fails on the suite's messages (SecurityError"),
    ("{{ messages | nosuchfilter }}", "not valid Jinja (No filter named 'nosuchfilter'"),
])
def test_a_template_that_does_not_render_names_why_and_the_fix(template, says):
    with pytest.raises(ChatTemplateError) as caught:
        render_text(template, MESSAGES)
    assert says in str(caught.value) and "llama-server --chat-template-file FILE" in str(caught.value)


def test_a_valid_template_renders():
    assert render_text("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}", MESSAGES) == \
        "<user>Say hi."
