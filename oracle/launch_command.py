"""A launch command taken apart (by `oracle bisect`, and by the speed card's `matched_except` label): env prefixes,
the wrappers that run the program (`env`, `taskset`, `numactl`, `nice`), the program, its positional arguments and
its flags; the differences between two commands as named changes; a subset
of them applied to the first. A leaf module (it imports only `redaction`), so that any layer may read commands.

    a, b = parse_launch(good), parse_launch(bad)
    changes = differences(a, b)            # [Change(kind="flag", key="-ctk", ...), ...]
    command = apply(a, changes[:1]).render()

A flag (`-x`, `--name`, not a negative number) takes the next word as its value unless that word is itself a
flag; `--name=value` keeps its `=`; after `--` every word is positional. A flag given more than once is one
change. Flags are compared by the name as written: `-fa` and `--flash-attn` are two names here. The assignments of
an `env` wrapper are environment variables as the prefixes are (`exec env X=1 srv` and `X=1 srv` differ in nothing
but the wrapper); a wrapper's own options (`taskset -c 0-3`, `nice -n 5`) are one change per wrapper.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field, replace

from oracle.redaction import MASK, redact_command, secret_name

__all__ = ["WRAPPERS", "Change", "Launch", "LaunchError", "Wrapper", "apply", "differences", "describe", "parse_launch",
           "port_refusal"]

_NUMBER = re.compile(r"-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_OPERATOR = set("();<>|&")
PLACEHOLDERS = ("{port}", "{worker}")
# Programs that run the next word as the command, and their options that take the next word as a value (a long
# option written `--name=value` carries its own; numactl's long options take the next word unless bare).
WRAPPERS = {"env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, "taskset": set(),
            "nice": {"-n", "--adjustment"},
            "numactl": {"-N", "-m", "-C", "-i", "-p", "-P", "-w", "-b", "--cpunodebind", "--membind",
                        "--physcpubind", "--interleave", "--preferred", "--preferred-many", "--weighted-interleave"}}


class LaunchError(ValueError):
    """A launch command bisect cannot take apart; the message names the fix."""


def port_refusal(flag: str, command: str) -> str | None:
    """Why a launch command cannot be started by oracle (no `{port}`: oracle picks the port and waits on it, so a
    command that does not take it would never be found healthy); None when it can."""
    if "{port}" not in command:
        return (f"{flag}: no {{port}} in the command: put {{port}} where the port goes (e.g. --port {{port}}), so "
                "that each server start gets a free port")
    return None


def is_flag(word: str) -> bool:
    return word.startswith("-") and word != "-" and word != "--" and not _NUMBER.fullmatch(word)


@dataclass(frozen=True)
class Item:
    """One part of the command after the program, in the order written: a positional word, or one occurrence of
    a flag (value None: a bare flag; eq: written `--name=value`)."""

    flag: str | None  # None: a positional word
    value: str | None
    eq: bool = field(default=False, compare=False)  # `--c=1` and `--c 1` say the same: not a difference

    def words(self) -> list[str]:
        if self.flag is None:
            return [self.value or ""]
        if self.value is None:
            return [self.flag]
        return [f"{self.flag}={self.value}"] if self.eq else [self.flag, self.value]


@dataclass(frozen=True)
class Wrapper:
    """A program that runs the command after it: its name, its options, and (`env`) its NAME=VALUE assignments."""

    name: str
    options: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    def words(self) -> list[str]:
        return [self.name, *self.options, *(f"{k}={v}" for k, v in self.env)]


@dataclass(frozen=True)
class Launch:
    env: tuple[tuple[str, str], ...]  # NAME=VALUE prefixes, in order
    program: str
    items: tuple[Item, ...]
    exec_: bool = False  # written `exec PROGRAM ...`
    wrappers: tuple[Wrapper, ...] = ()  # `env X=1`, `taskset -c 0-3`, ... between the prefixes and the program

    @property
    def environment(self) -> dict[str, str]:
        """Every variable the program gets from the command: the prefixes, then each `env` wrapper's assignments."""
        out = dict(self.env)
        for w in self.wrappers:
            out.update(w.env)
        return out

    def wrapper(self, name: str) -> Wrapper | None:
        return next((w for w in self.wrappers if w.name.rsplit("/", 1)[-1] == name), None)

    @property
    def positionals(self) -> list[str]:
        return [i.value or "" for i in self.items if i.flag is None]

    def flag_items(self, name: str) -> tuple[Item, ...]:
        return tuple(i for i in self.items if i.flag == name)

    @property
    def flag_names(self) -> list[str]:
        return list(dict.fromkeys(i.flag for i in self.items if i.flag is not None))

    def words(self) -> list[str]:
        out = [f"{k}={v}" for k, v in self.env] + (["exec"] if self.exec_ else [])
        out += [word for w in self.wrappers for word in w.words()] + ([self.program] if self.program else [])
        for item in self.items:
            out += item.words()
        return out

    def render(self) -> str:
        """The command for the shell: each word quoted, `{port}` and `{worker}` left bare as written."""
        return render_words(self.words())


def render_words(words: list[str]) -> str:
    out = []
    for w in words:
        m = _ENV.match(w)
        out.append(m.group(0) + shlex.quote(w[m.end():]) if m and not w.startswith("-") else shlex.quote(w))
    text = " ".join(out)
    for p in PLACEHOLDERS:
        text = text.replace(shlex.quote(p), p)
    return text


def parse_launch(command: str) -> Launch:
    """LaunchError for a command bisect cannot take apart word by word (shell operators, expansions)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars="();<>|&")
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError as exc:  # an unclosed quote
        raise LaunchError(f"{exc}: close the quote") from None
    for w in words:
        if w and set(w) <= _OPERATOR:
            raise LaunchError(f"the command holds the shell operator {w!r}: bisect takes one command apart word by "
                              "word; put the rest in a script and launch that")
        if "$" in w or "`" in w or w.startswith("~"):
            raise LaunchError(f"the word {redact_command(w)!r} needs the shell to expand it: bisect quotes every "
                              "word it runs, so give the value itself (a double-quoted --good/--bad lets your shell "
                              "expand $VAR first)")
    env = []
    k = 0
    while k < len(words) and _ENV.match(words[k]):
        name, _, value = words[k].partition("=")
        env.append((name, value))
        k += 1
    exec_ = k < len(words) and words[k] == "exec"
    k += exec_
    wrappers = []
    while k < len(words) and words[k].rsplit("/", 1)[-1] in WRAPPERS and k + 1 < len(words):
        wrapper, k = _wrapper(words, k)
        wrappers.append(wrapper)
    program = words[k] if k < len(words) else ""
    return Launch(tuple(env), program, tuple(_items(words[k + 1:])), exec_, tuple(wrappers))


def _wrapper(words: list[str], k: int) -> tuple[Wrapper, int]:
    """The wrapper at words[k] and the index of the word after it: its options (a value taken where the option
    needs one), `env`'s assignments, and taskset's mask (the first word that is not an option)."""
    written = words[k]
    name = written.rsplit("/", 1)[-1]
    takes = WRAPPERS[name]
    options, env = [], []
    k += 1
    while k < len(words):
        w = words[k]
        if w == "--":
            options.append(w)
            k += 1
            break
        if w.startswith("-") and len(w) > 1:
            options.append(w)
            if w in takes and k + 1 < len(words):
                options.append(words[k + 1])
                k += 1
            k += 1
        elif name == "env" and _ENV.match(w):
            key, _, value = w.partition("=")
            env.append((key, value))
            k += 1
        elif name == "taskset" and not any(not o.startswith("-") for o in options):
            options.append(w)  # the mask or CPU list
            k += 1
        else:
            break
    return Wrapper(written, tuple(options), tuple(env)), k


def _items(words: list[str]) -> list[Item]:
    items, k, rest = [], 0, False
    while k < len(words):
        w = words[k]
        if rest or not is_flag(w):
            rest = rest or w == "--"
            items.append(Item(None, w))
        elif "=" in w and w.startswith("--"):
            name, _, value = w.partition("=")
            items.append(Item(name, value, eq=True))
        elif k + 1 < len(words) and not is_flag(words[k + 1]) and words[k + 1] != "--":
            items.append(Item(w, words[k + 1]))
            k += 1
        else:
            items.append(Item(w, None))
        k += 1
    return items


@dataclass(frozen=True)
class Change:
    """One difference between A and B: kind "env", "wrapper", "program", "positional" or "flag"; key the variable's
    name, the wrapper's name, the positional's index or the flag's name; a / b what each side has (None: absent)."""

    kind: str
    key: str | int
    a: object
    b: object

    @property
    def label(self) -> str:
        """The change as people read it, secrets redacted: `-ctk q8_0`, `-c 4096 (was 8192)`, `--metrics (removed)`."""
        return describe(self)


def _side_words(change: Change, side) -> list[str]:
    if side is None:
        return []
    if change.kind == "env":
        return [f"{change.key}={side}"]
    if change.kind == "flag":
        return [w for item in side for w in item.words()]
    if change.kind == "wrapper":
        return list(side)
    return [str(side)]


def describe(change: Change) -> str:
    b_words, a_words = _side_words(change, change.b), _side_words(change, change.a)
    shown = redact_command(render_words(b_words or a_words))
    if change.kind == "program":
        return f"program {shown} (was {redact_command(render_words(a_words))})"
    if change.kind == "positional":
        where = f"argument {change.key + 1}"
        if change.a is None:
            return f"{where} {shown} (added)"
        if change.b is None:
            return f"{where} {shown} (removed)"
        return f"{where} {shown} (was {redact_command(render_words(a_words))})"
    if change.a is None:
        return f"{shown} (added)" if change.kind == "wrapper" else shown
    if change.b is None:
        return f"{shown} (removed)"
    if change.kind in ("env", "wrapper"):
        return f"{shown} (was {redact_command(render_words(a_words))})"
    old = [item.value for item in change.a if item.value is not None]
    was = (MASK if secret_name(str(change.key)) else render_words(old)) if old else "bare"
    return f"{shown} (was {was})"


def differences(a: Launch, b: Launch) -> list[Change]:
    """Every difference, in the order: env, wrappers, program, positionals, flags (A's order, then B's new ones)."""
    changes: list[Change] = []
    a_env, b_env = a.environment, b.environment
    for name in dict.fromkeys([*a_env, *b_env]):
        if a_env.get(name) != b_env.get(name):
            changes.append(Change("env", name, a_env.get(name), b_env.get(name)))
    for name in dict.fromkeys([_short(w) for w in (*a.wrappers, *b.wrappers)]):
        wa, wb = _wrapper_words(a, name), _wrapper_words(b, name)
        if wa != wb:
            changes.append(Change("wrapper", name, wa, wb))
    if a.program != b.program:
        changes.append(Change("program", 0, a.program, b.program))
    pa, pb = a.positionals, b.positionals
    for i in range(max(len(pa), len(pb))):
        va, vb = (pa[i] if i < len(pa) else None), (pb[i] if i < len(pb) else None)
        if va != vb:
            changes.append(Change("positional", i, va, vb))
    for name in dict.fromkeys([*a.flag_names, *b.flag_names]):
        fa, fb = a.flag_items(name), b.flag_items(name)
        if fa != fb:
            changes.append(Change("flag", name, fa or None, fb or None))
    return changes


def _short(w: Wrapper) -> str:
    return w.name.rsplit("/", 1)[-1]


def _wrapper_words(launch: Launch, name: str) -> tuple[str, ...] | None:
    """What a wrapper adds besides environment variables: its name and options; None when it is absent (and an
    `env` wrapper without options, which says nothing a prefix would not)."""
    w = launch.wrapper(name)
    if w is None or (name == "env" and not w.options):
        return None
    return (w.name, *w.options)


def apply(a: Launch, changes: list[Change] | tuple[Change, ...]) -> Launch:
    """A with these changes made (each taken from B as it is): what a probe starts."""
    env = dict(a.env)
    wrappers = list(a.wrappers)
    program = a.program
    items = list(a.items)
    for c in changes:
        if c.kind == "env":
            held = next((k for k, w in enumerate(wrappers) if c.key in dict(w.env)), None)
            if held is not None:  # the variable is an `env` wrapper's: changed (or dropped) there
                w = wrappers[held]
                kept = [(k, v if k != c.key else c.b) for k, v in w.env if k != c.key or c.b is not None]
                wrappers[held] = replace(w, env=tuple(kept))
            elif c.b is None:
                env.pop(c.key, None)
            else:
                env[c.key] = c.b
        elif c.kind == "wrapper":
            wrappers = _with_wrapper(wrappers, c)
        elif c.kind == "program":
            program = c.b
        elif c.kind == "flag":
            items = _with_flag(items, c)
    positional = {c.key: c for c in changes if c.kind == "positional"}
    if positional:
        items = _with_positionals(items, positional)
    return replace(a, env=tuple(env.items()), program=program, items=tuple(items), wrappers=tuple(wrappers))


def _with_wrapper(wrappers: list[Wrapper], c: Change) -> list[Wrapper]:
    """B's wrapper (its name and options) in place of A's, A's `env` assignments kept; a new one goes last."""
    at = next((k for k, w in enumerate(wrappers) if _short(w) == c.key), None)
    keep_env = wrappers[at].env if at is not None else ()
    new = Wrapper(c.b[0], tuple(c.b[1:]), keep_env) if c.b is not None else (
        Wrapper(wrappers[at].name, (), keep_env) if keep_env else None)
    if at is None:
        return wrappers + [new] if new is not None else wrappers
    return wrappers[:at] + ([new] if new is not None else []) + wrappers[at + 1:]


def _with_flag(items: list[Item], c: Change) -> list[Item]:
    """B's occurrences where A's first one was (A's dropped); a flag A lacks goes after A's last flag, before any
    trailing positionals (`-- CMD...`)."""
    at = next((k for k, i in enumerate(items) if i.flag == c.key), None)
    kept = [i for i in items if i.flag != c.key]
    new = list(c.b or ())
    if at is None:  # (else: nothing before A's first occurrence was dropped, so `at` still points there)
        flags = [k for k, i in enumerate(kept) if i.flag is not None]
        at = flags[-1] + 1 if flags else len(kept)
    return kept[:at] + new + kept[at:]


def _with_positionals(items: list[Item], changes: dict[int, Change]) -> list[Item]:
    out, index = [], 0
    for item in items:
        if item.flag is None:
            c = changes.get(index)
            index += 1
            if c is not None:
                if c.b is None:
                    continue
                item = Item(None, c.b)
        out.append(item)
    added = [Item(None, changes[k].b) for k in sorted(changes) if changes[k].a is None]
    last = max((k for k, i in enumerate(out) if i.flag is None), default=-1)  # after A's last positional
    return out[:last + 1] + added + out[last + 1:]
