"""Secrets never leave the process: everything oracle writes passes through here first.

    redact_command("HF_TOKEN=hf_x vllm serve m --api-key sk-1")  # 'HF_TOKEN=*** vllm serve m --api-key ***'
    remember_secrets(commands=[launch, server_args], urls=urls)  # the run's own secret values
    public_text(text)                                            # what may be written or printed

A secret is the value of a `NAME=VALUE` assignment or of a `--flag` whose name is secret (`secret_name`), the
value of an `Authorization`-like header, the password of a URL (`http://user:***@host`), and the value of a
secret-named environment variable. Commands and URLs are redacted where they are recorded (the name is kept, the
value becomes `***`); `public_text` then hides every remembered value wherever it appears verbatim (a server log
that echoes a key, an error message that quotes a URL) and the same patterns in free text. It is applied at one
chokepoint per kind of output: text files (`store.records.atomic_write_text`), the launched server's log
(`scrub_file`), the terminal and usage errors (the plugin) and the `oracle` command's output (`cli`).
"""

from __future__ import annotations

import html
import json
import os
import re
import shlex
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

__all__ = ["MASK", "MIN_SCRUBBED", "PublicStream", "public_data", "public_text", "redact_command", "redact_text", "redact_url",
           "remember_secrets", "scrub_file", "secret_name", "secret_values"]

MASK = "***"
MIN_SCRUBBED = 6  # shorter values are too common to hide wherever they appear; they are hidden where assigned
# Secret when one of these is inside the name (PGPASSWORD, AWS_SECRET_ACCESS_KEY, SSH_AUTH_SOCK, LLAMA_ARG_AUTH)...
_INSIDE = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "AUTH", "CREDENTIAL", "APIKEY")
# ... or its last word is one of these (HF_TOKEN, VLLM_API_KEY, --api-key, DB_PASS; not MAX_TOKENS, --top-k).
_LAST = ("TOKEN", "KEY", "KEYS", "PASS")
_FLAGS = ("--api-key-file", "--ssl-key-file", "-hft")  # secret flags whose names do not say so
_HEADER_FLAGS = ("-H", "--header")
_SECRET_HEADERS = ("COOKIE",)
_OPERATORS = ";&|()<>\n"
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_URL_USERINFO = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^\s/@:'\"<>]*)(?::([^\s/@'\"<>]*))?@")
# In free text only variables written in capitals (HF_TOKEN=x) and long flags (--api-key=x): a model's code
# (`def put(key=None)`) is left alone.
_TEXT_ASSIGNMENT = re.compile(r"(?<![A-Za-z0-9_-])([A-Z_][A-Z0-9_]*|--[A-Za-z][A-Za-z0-9_-]*)="
                              r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'`\\&;,<>)\]}]+)")
_TEXT_HEADER = re.compile(r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|cookie)(\s*[:=]\s*)"
                          r"((?:basic|bearer|token)\s+)?([^\s\"'`\\,;<>]+)")
_BEARER = re.compile(r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{4,})")

_remembered: set[str] = set()


@lru_cache(maxsize=4096)
def secret_name(name: str) -> bool:
    """True for a variable, flag or header name that holds a secret: TOKEN, KEY, KEYS or PASS as its last word
    (HF_TOKEN, VLLM_API_KEY, --api-key, DB_PASS), or PASSWORD, PASSWD, PASSPHRASE, SECRET, AUTH, CREDENTIAL or
    APIKEY anywhere in it (PGPASSWORD, --auth, accessCredentials). MAX_TOKENS, --n-predict, --top-k,
    --enable-prompt-tokens-details and --return-tokens-as-token-ids are not secret."""
    if name in _FLAGS:
        return True
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name.strip("-"))  # camelCase words
    upper = spaced.upper()
    words = [w for w in re.split(r"[^A-Z0-9]+", upper) if w]
    if not words:
        return False
    return any(s in upper for s in _INSIDE) or words[-1] in _LAST or upper in _SECRET_HEADERS


def redact_url(url: str) -> str:
    """`http://user:pass@host` -> `http://user:***@host`; `http://token@host` -> `http://***@host`."""
    return _URL_USERINFO.sub(_url_sub, url)


def _url_sub(m: re.Match) -> str:
    scheme, user, password = m.group(1), m.group(2), m.group(3)
    if password is None:
        return f"{scheme}{MASK}@" if user else m.group(0)
    return f"{scheme}{user}:{MASK}@"


def _words(command: str) -> list[tuple[int, int, str]]:
    """The shell words of a command as (start, end, value), quotes and backslashes removed; `;`, `&&`, `|` and
    the like are words of their own. Lenient: an unclosed quote runs to the end (it is still redacted)."""
    out, i, n = [], 0, len(command)
    while i < n:
        c = command[i]
        if c in " \t":
            i += 1
            continue
        if c in _OPERATORS:
            j = i
            while j < n and command[j] in _OPERATORS and command[j] != "\n":
                j += 1
            out.append((i, max(j, i + 1), command[i:max(j, i + 1)]))
            i = max(j, i + 1)
            continue
        start, value = i, []
        while i < n and command[i] not in " \t" and command[i] not in _OPERATORS:
            c = command[i]
            if c == "\\" and i + 1 < n:
                value.append(command[i + 1])
                i += 2
            elif c == "'":
                end = command.find("'", i + 1)
                end = n if end < 0 else end
                value.append(command[i + 1:end])
                i = end + 1
            elif c == '"':
                i += 1
                while i < n and command[i] != '"':
                    if command[i] == "\\" and i + 1 < n and command[i + 1] in '"\\$`':
                        i += 1
                    value.append(command[i])
                    i += 1
                i += 1
            else:
                value.append(c)
                i += 1
        out.append((start, min(i, n), "".join(value)))
    return out


def _secret_spans(command: str) -> list[tuple[int, int, str, str]]:
    """(start, end, replacement, secret value) for each secret in a command."""
    words = _words(command)
    spans = []
    for k, (start, end, word) in enumerate(words):
        raw = command[start:end]
        # The next word, unless it is `;`, `&&`, `|`... (only an operator word starts with an operator character).
        nxt = words[k + 1] if k + 1 < len(words) and command[words[k + 1][0]] not in _OPERATORS else None
        assignment = _ASSIGNMENT.match(word)
        flag, eq, value = word.partition("=")
        if assignment and not word.startswith("-"):
            name = assignment.group(1)
            if secret_name(name):
                value = word[len(name) + 1:]
                spans.append(_value_span(raw, start, end, f"{name}=", value))
        elif word.startswith("-") and len(word) > 1 and not word[1:2].isdigit():
            if flag in _HEADER_FLAGS:
                header = value if eq else (nxt[2] if nxt else None)
                hname, colon, hvalue = (header or "").partition(":")
                if colon and secret_name(hname.strip()) and hvalue.strip():
                    redacted = shlex.quote(f"{hname}: {MASK}")
                    if eq:
                        spans.append((start, end, f"{flag}={redacted}", hvalue.strip()))
                    else:
                        spans.append((nxt[0], nxt[1], redacted, hvalue.strip()))
                    spans += [(0, 0, "", v) for v in _header_values(hvalue)]
            elif secret_name(flag):
                if eq:
                    spans.append(_value_span(raw, start, end, f"{flag}=", value))
                elif nxt:
                    spans.append((nxt[0], nxt[1], MASK, nxt[2]))
    return spans


def _value_span(raw: str, start: int, end: int, prefix: str, value: str) -> tuple[int, int, str, str]:
    if raw.startswith(prefix):  # NAME=VALUE as written: only the value is replaced, quotes and all
        return start + len(prefix), end, MASK, value
    return start, end, prefix + MASK, value


def _header_values(hvalue: str) -> list[str]:
    """`Bearer KEY` -> [KEY] too, so the bare key is scrubbed wherever it shows."""
    parts = hvalue.split()
    return [parts[-1]] if len(parts) > 1 else []


def redact_command(command: str) -> str:
    """The command as written, with the value of every secret assignment, flag and header replaced by `***` and
    every URL's password hidden; the names are kept, so the report still says what was set."""
    out, last = [], 0
    for start, end, replacement, _ in sorted(s for s in _secret_spans(command) if s[1] > s[0]):
        if start < last:
            continue
        out += [command[last:start], replacement]
        last = end
    return redact_text("".join(out) + command[last:])  # and what the shell words missed (an unclosed quote)


def secret_values(*, commands=(), urls=(), environ: dict[str, str] | None = None) -> set[str]:
    """The secret values in these commands, the passwords (and bare user tokens) of these URLs and the values
    of the secret-named variables of environ."""
    values: set[str] = set()
    for command in commands:
        if command:
            values.update(v for *_, v in _secret_spans(command))
            values.update(_url_secrets(command))
    for url in urls:
        values.update(_url_secrets(url or ""))
    for name, value in (environ or {}).items():
        if secret_name(name):
            values.add(value)
        values.update(_url_secrets(value))
    return {v for v in values if v}


def _url_secrets(text: str) -> set[str]:
    found = set()
    for m in _URL_USERINFO.finditer(text):
        secret = m.group(3) if m.group(3) is not None else m.group(2)
        if secret:
            found.update((secret, unquote(secret)))
    return found


def remember_secrets(*, commands=(), urls=()) -> None:
    """Remember this run's secret values (from --launch, --server-args, --oracle-url) for every later public_text."""
    _remembered.update(secret_values(commands=commands, urls=urls))


def redact_text(text: str) -> str:
    """Free text with secret-looking patterns hidden: URL passwords, `NAME=VALUE` of secret names,
    `Authorization: Bearer ...` and other secret headers."""
    text = redact_url(text)
    text = _TEXT_ASSIGNMENT.sub(lambda m: f"{m.group(1)}={MASK}" if secret_name(m.group(1)) else m.group(0), text)
    text = _TEXT_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) or ''}{MASK}", text)
    return _BEARER.sub(lambda m: f"{m.group(1)}{MASK}", text)


def _forms(value: str) -> set[str]:
    """A value as it may appear in what oracle writes: itself, JSON-escaped, HTML-escaped, shell-quoted."""
    return {value, json.dumps(value)[1:-1], html.escape(value), html.escape(value, quote=False), shlex.quote(value)}


def public_text(text: str) -> str:
    """Text fit to leave the process: every remembered secret value and every secret-named environment
    variable's value (of at least MIN_SCRUBBED characters) replaced by `***` wherever it appears, then
    `redact_text`."""
    values = _remembered | secret_values(environ=dict(os.environ))
    forms = {f for v in values if len(v) >= MIN_SCRUBBED for f in _forms(v)}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, MASK)
    return redact_text(text)


def public_data(data: dict) -> dict:
    """JSON-able data made public (public_text over its JSON): for a file that must hash what it holds."""
    return json.loads(public_text(json.dumps(data)))


def scrub_file(path: Path) -> None:
    """Rewrite a file written by another process (a launched server's log) with public_text; kept as it is
    when nothing in it is secret."""
    try:
        raw = path.read_bytes()
    except OSError:
        return
    text = raw.decode("utf-8", errors="surrogateescape")
    clean = public_text(text)
    if clean != text:
        tmp = path.with_name(path.name + ".scrubbing")
        data = clean.encode("utf-8", errors="surrogateescape")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, path)
        except OSError:  # a full disk, a file-size limit: the secret must not stay, and the stop goes on
            tmp.unlink(missing_ok=True)
            _overwrite(path, data)


def _overwrite(path: Path, data: bytes) -> None:
    """data over the file's own bytes (no new space needed: the clean text is no longer than the log); where
    even that fails, the file is cut where the clean text written ends, so no secret stays behind it."""
    fd = os.open(path, os.O_WRONLY)
    written = 0
    try:
        while written < len(data):
            written += os.write(fd, data[written:])
    except OSError:
        pass
    finally:
        os.ftruncate(fd, written)
        os.close(fd)


class PublicStream:
    """A text stream whose every write goes through public_text: the terminal of a gate run."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(public_text(text))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
