"""The validating types of oracle's options: each turns a command-line string into a plain value, or raises
pytest.UsageError whose message names the fix.

    g.addoption("--ladder", type=ladder_levels, ...)
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from oracle.redaction import redact_command, redact_url
from oracle.run.plan_estimate import parse_duration
from oracle.run.plan_estimate import EMBEDDED_CPU_BUDGET as DEFAULT_BUDGET
from oracle.speed.cells import parse_cells

__all__ = ["DEFAULT_BUDGET", "DTYPES", "budget_value", "INCONCLUSIVE_KINDS", "LADDER_ARRIVALS", "LADDER_MODES", "backend_name",
           "ledger_target",
           "bounded", "condition_names", "ladder_arrivals",
           "dtype", "existing_path", "floor_dtype", "inconclusive_kinds", "integer", "int_list",
           "ov_config", "ladder_levels", "prefill_chunks", "prefill_lengths",
           "runner_arg", "seed", "SERVED_BATCH", "SAMPLING_CHECKS",
           "sampling_check", "temperature", "top_p",
           "ladder_minimums", "ladder_mode", "non_negative_int", "positive_int", "power_mode", "reference_kind",
           "shell_command", "speed_cells", "speedup", "POWER_MODES"]

LADDER_MODES = ("cycle", "same")
LADDER_ARRIVALS = ("at-once", "staggered")  # see run/ladder.py
POWER_MODES = ("auto", "off")  # see speed/power.py
DTYPES = ("float32", "float16", "bfloat16")  # the hf backend's; kept here so options never import torch
INCONCLUSIVE_KINDS = ("cache", "speculation", "overlap", "canary", "speed", "coverage", "sampling")
# --sampling-check: tokens (seeded identity: the same config gives the same tokens per seed) or distribution.
SAMPLING_CHECKS = ("tokens", "distribution")


def temperature(value: str) -> float:
    """--temperature: above 0 (greedy is no --temperature), at most 10."""
    try:
        t = float(value)
    except ValueError:
        raise pytest.UsageError(f"--temperature {value!r}: expected a number, e.g. --temperature 0.8") from None
    if not 0 < t <= 10:
        raise pytest.UsageError(f"--temperature {value!r}: must be above 0 and at most 10 (a greedy run: leave "
                                "--temperature out)")
    return t


def top_p(value: str) -> float:
    """--top-p: the nucleus kept, in (0, 1]."""
    try:
        p = float(value)
    except ValueError:
        raise pytest.UsageError(f"--top-p {value!r}: expected a number, e.g. --top-p 0.95") from None
    if not 0 < p <= 1:
        raise pytest.UsageError(f"--top-p {value!r}: must be above 0 and at most 1, e.g. --top-p 0.95")
    return p


def sampling_check(value: str) -> str:
    if value not in SAMPLING_CHECKS:
        raise pytest.UsageError(f"--sampling-check {value!r}: must be tokens (the same tokens per seed) or "
                                "distribution (the candidate's samples scored under the reference model)")
    return value


def _int_at_least(flag: str, least: int, expected: str, example: int, floor_words: str):
    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise pytest.UsageError(f"{flag} {value!r}: expected {expected}, e.g. {flag} {example}") from None
        if n < least:
            raise pytest.UsageError(f"{flag} {value!r}: must be {floor_words}")
        if n > COUNT_MAX:  # the servers keep their counts in 32 bits: a larger one would wrap or be refused there
            raise pytest.UsageError(f"{flag} {value!r}: must be at most {COUNT_MAX}, e.g. {flag} {example}")
        return n
    return parse


COUNT_MAX = 2**31 - 1  # the largest count a server takes (a signed 32-bit int in llama.cpp and vLLM's C++ parts)


def positive_int(flag: str):
    return _int_at_least(flag, 1, "a positive integer", 5, "at least 1")


# Top logprobs per position: the whole vocabulary at most (a runner's raw logit cosine asks for all of it). The
# largest vocabulary among the models gated here is 262144 (Gemma 3); the served one is checked at start
# (gate/session.py), before the first request.
TOP_K_MAX = 262144


def top_k(flag: str):
    """A count of top logprobs per position: at least 1, at most TOP_K_MAX (a record keeps an id and a logprob per
    entry at every position)."""
    parse_int = positive_int(flag)

    def parse(value: str) -> int:
        n = parse_int(value)
        if n > TOP_K_MAX:
            raise pytest.UsageError(f"{flag} {value!r}: more top logprobs per position than any vocabulary has "
                                    f"(at most {TOP_K_MAX}); the logits checks read 5 to 64, the whole vocabulary "
                                    f"is its size, e.g. {flag} 49152 for SmolLM2")
        return n
    return parse


def non_negative_int(flag: str):
    return _int_at_least(flag, 0, "a whole number", 1, "0 or more")


def integer(flag: str, example: int):
    """Any whole number (e.g. a seed)."""
    def parse(value: str) -> int:
        try:
            return int(value)
        except ValueError:
            raise pytest.UsageError(f"{flag} {value!r}: expected a whole number, e.g. {flag} {example}") from None
    return parse


def seed(value: str) -> int:
    """--oracle-seed: a whole number, 0 or more (a negative seed is llama-server's "random each time")."""
    number = integer("--oracle-seed", 1234)(value)
    if number < 0:
        raise pytest.UsageError(f"--oracle-seed {value!r}: must be 0 or more; a negative seed asks the server for a random "
                                "seed each time, which no run can repeat (e.g. --oracle-seed 1234)")
    if number >= SEED_RANDOM:
        raise pytest.UsageError(f"--oracle-seed {value!r}: must be below {SEED_RANDOM}; llama-server keeps a seed in 32 bits "
                                f"and {SEED_RANDOM} is its own \"random each time\" (e.g. --oracle-seed 1234)")
    return number


# llama.cpp's LLAMA_DEFAULT_SEED (0xFFFFFFFF): a random seed per request; its seeds are 32-bit.
SEED_RANDOM = 2**32 - 1


def existing_path(flag: str, what: str):
    """A file (or folder) that must be there when the run starts; the message says what to give."""
    def parse(value: str) -> str:
        try:
            there = Path(value).exists()
        except OSError as exc:  # a name longer than the filesystem allows, a folder that cannot be looked into
            raise pytest.UsageError(f"{flag} {value[:60]}: cannot be looked at ({exc.strerror or exc}); give "
                                    f"{what}") from None
        if not there:
            raise pytest.UsageError(f"{flag} {value}: no such file or folder; give {what}")
        return value
    return parse


def speed_cells(value: str) -> tuple[tuple[int, int], ...]:
    """--speed-cells: `field` or pN/gM,...: (prompt tokens, generated tokens) per cell."""
    try:
        return tuple((c.prompt_tokens, c.gen_tokens) for c in parse_cells(value))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def speedup(value: str) -> float:
    """--min-speedup: a ratio candidate / reference above 0 (1.0: at least as fast; 1.2: 20% faster)."""
    try:
        x = float(value.rstrip("xX"))
    except ValueError:
        raise pytest.UsageError(f"--min-speedup {value!r}: expected a ratio, e.g. --min-speedup 1.1 (10% faster "
                                "than the reference)") from None
    if not 0 < x < 1000:
        raise pytest.UsageError(f"--min-speedup {value!r}: must be a ratio above 0, e.g. 1.0 (no slower than "
                                "the reference)")
    return x


def bounded(flag: str, what: str, example: str, low: float, high: float, *, percent: bool = False):
    """A float option in [low, high] (high excluded unless percent); the message names an example."""
    def parse(value: str) -> float:
        try:
            x = float(value.rstrip("%") if percent else value)
        except ValueError:
            raise pytest.UsageError(f"{flag} {value!r}: expected {what}, e.g. {flag} {example}") from None
        if not (low <= x <= high if percent else low <= x < high):
            unit = "a percentage between" if percent else "between"
            raise pytest.UsageError(f"{flag} {value!r}: must be {unit} {low:g} and {high:g}"
                                    + ("" if percent else " nats"))
        return x
    return parse




SERVED_BATCH = "served"  # --prefill-chunks: the server's prefill chunk (Backend.prefill_chunk, read at start)


def prefill_chunks(value: str) -> tuple[int | str, ...]:
    """--prefill-chunks: sizes in tokens and/or `served` (the server's batch), comma-separated; `none`: one
    pass only."""
    if value.strip() == "none":
        return ()
    out: list[int | str] = []
    for part in (p.strip() for p in value.split(",")):
        if part == SERVED_BATCH:
            size: int | str = part
        else:
            try:
                size = int(part)
            except ValueError:
                raise pytest.UsageError(f"--prefill-chunks {value!r}: {part!r} is neither a number of tokens nor "
                                        f"{SERVED_BATCH!r}; e.g. --prefill-chunks 64,served (or none)") from None
            if size < 1:
                raise pytest.UsageError(f"--prefill-chunks {value!r}: a chunk holds at least 1 token")
        if size not in out:
            out.append(size)
    return tuple(out)


def prefill_lengths(value: str) -> tuple[int, ...]:
    """--prefill-lengths: the chunked-prefill ladder's prefix lengths in tokens, comma-separated; `none`: no ladder
    (the suite's own paths only)."""
    if value.strip() == "none":
        return ()
    try:
        lengths = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise pytest.UsageError(f"--prefill-lengths {value!r}: expected comma-separated prefix lengths in tokens, "
                                "e.g. --prefill-lengths 1,7,64,256,1024 (or none)") from None
    if not lengths or lengths[0] < 1:
        raise pytest.UsageError(f"--prefill-lengths {value!r}: a prefix holds at least 1 token, e.g. "
                                "--prefill-lengths 64,300 (or none)")
    return tuple(lengths)


def inconclusive_kinds(value: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    bad = [k for k in kinds if k not in INCONCLUSIVE_KINDS]
    if bad:
        raise pytest.UsageError(f"--allow-inconclusive {value!r}: unknown kind {bad[0]!r}; "
                                f"known kinds: {', '.join(INCONCLUSIVE_KINDS)}")
    return kinds


def backend_name(value: str) -> str:
    from oracle.backends import check_platform

    try:
        check_platform(value)  # parses it, then the platform tag
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return value


def shell_command(flag: str):
    def parse(value: str) -> str:
        try:
            shlex.split(value)
        except ValueError as exc:
            raise pytest.UsageError(f"{flag} {redact_command(value)!r}: cannot split it as a shell command ({exc}); "
                                    "check the quotes") from None
        return value
    return parse


def reference_kind(value: str) -> str:
    if value not in ("mtp0", "f16"):
        raise pytest.UsageError(f"--reference-kind {value!r}: must be mtp0 (target only) or f16")
    return value


def dtype(value: str) -> str:
    if value not in DTYPES:
        raise pytest.UsageError(f"--dtype {value!r}: must be one of {', '.join(DTYPES)}")
    return value


def ov_config(value: str) -> tuple[tuple[str, str], ...]:
    """--ov-config KEY=VALUE,...: OpenVINO properties, e.g. INFERENCE_PRECISION_HINT=f32,KV_CACHE_PRECISION=f32."""
    pairs = []
    for part in filter(None, value.split(",")):
        key, eq, val = part.partition("=")
        if not eq or not key.strip() or not val.strip():
            raise pytest.UsageError(f"--ov-config {value!r}: write KEY=VALUE,..., e.g. INFERENCE_PRECISION_HINT=f32,"
                                    "KV_CACHE_PRECISION=f32,DYNAMIC_QUANTIZATION_GROUP_SIZE=0")
        pairs.append((key.strip(), val.strip()))
    return tuple(pairs)


def runner_arg(value: str) -> tuple[str, str]:
    """--runner-arg k=v: one keyword argument (a string) of the python runner's factory."""
    key, eq, val = value.partition("=")
    if not eq or not key.strip().isidentifier():
        raise pytest.UsageError(f"--runner-arg {value!r}: write NAME=VALUE with NAME a Python identifier (a keyword "
                                "of the runner's factory), e.g. --runner-arg ir=int4")
    return key.strip(), val


def floor_dtype(value: str) -> str:
    if value != "none" and value not in DTYPES:
        raise pytest.UsageError(f"--floor-dtype {value!r}: must be one of {', '.join(DTYPES)}, or none")
    return value


def ladder_levels(value: str) -> tuple[int, ...]:
    try:
        levels = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise pytest.UsageError(f"--ladder {value!r}: expected comma-separated concurrency levels, "
                                "e.g. --ladder 1,2,4,8") from None
    if not levels or levels[0] < 1 or levels[-1] > 1024:
        raise pytest.UsageError(f"--ladder {value!r}: levels must be between 1 and 1024, e.g. --ladder 1,2,4,8")
    return tuple(levels)


def ladder_arrivals(value: str) -> str:
    if value not in LADDER_ARRIVALS:
        raise pytest.UsageError(f"--ladder-arrivals {value!r}: must be at-once (each wave's requests sent together) "
                                "or staggered (each sent once the one before it has its first token)")
    return value


def power_mode(value: str) -> str:
    if value not in POWER_MODES:
        raise pytest.UsageError(f"--oracle-power {value!r}: must be auto (energy, temperature and isolation of the timed run "
                                "where this host can read them) or off (none measured)")
    return value


def condition_names(value: str) -> tuple[str, ...]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:  # the default (argparse types a string default too): nothing to look up
        return ()
    from oracle.compare.coverage import CONDITIONS  # only when given: the declarations stay light

    bad = [n for n in names if n not in CONDITIONS]
    if bad:
        raise pytest.UsageError(f"--require-conditions {value!r}: unknown condition {bad[0]!r}; known: "
                                f"{', '.join(CONDITIONS)}")
    return tuple(dict.fromkeys(names))


def ladder_mode(value: str) -> str:
    if value not in LADDER_MODES:
        raise pytest.UsageError(f"--ladder-mode {value!r}: must be cycle (the suite's prompts cycled) or same "
                                "(c copies of the first prompt)")
    return value


def ladder_minimums(value: str) -> tuple[tuple[int, int, int], ...]:
    """'c32=29/32,c64=58/64' -> ((32, 29, 32), (64, 58, 64))."""
    out = []
    for part in (p.strip() for p in value.split(",") if p.strip()):
        m = re.fullmatch(r"c(\d+)=(\d+)/(\d+)", part)
        if not m or int(m.group(3)) == 0 or int(m.group(2)) > int(m.group(3)):
            raise pytest.UsageError(f"--ladder-min {part!r}: expected cLEVEL=EXACT/TOTAL with EXACT <= TOTAL, "
                                    "e.g. --ladder-min c32=29/32,c64=58/64")
        out.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    return tuple(out)


def int_list(flag: str, *, low: int, high: int | None = None):
    """Comma-separated integers in [low, high], 1K = 1024, as a tuple."""
    def parse(value: str) -> tuple[int, ...]:
        out = []
        for part in (p.strip() for p in value.split(",") if p.strip()):
            mult = 1024 if part[-1:] in "kK" else 1
            try:
                n = int(part[:-1] if mult > 1 else part) * mult
            except ValueError:
                raise pytest.UsageError(f"{flag} {value!r}: expected comma-separated integers, e.g. {flag} "
                                        f"{'1K,2K,4K' if flag == '--needle-lengths' else '0,50,100'}") from None
            if n < low or (high is not None and n > high):
                raise pytest.UsageError(f"{flag} {value!r}: {part} is out of range ({low}..{high or 'max'})")
            out.append(n)
        if not out:
            raise pytest.UsageError(f"{flag}: give at least one value")
        return tuple(out)
    return parse


_LEDGER_SCHEMES = ("sqlite", "postgresql", "postgres")


def ledger_target(value: str) -> str:
    """--ledger: a file path, off, or a sqlite:/// or postgresql:// URL (read here as text, its password hidden:
    the database is opened only when the run ends)."""
    scheme = value.partition("://")[0].partition("+")[0].lower() if "://" in value else None
    if not value.strip() or (scheme is not None and scheme not in _LEDGER_SCHEMES):
        raise pytest.UsageError(f"--ledger {redact_url(value)}: not a ledger; give a SQLite file path "
                                "(reports/ledger.sqlite), a postgresql://user@host/db URL, or off")
    return value



def budget_value(value: str) -> str:
    """--oracle-budget: a duration (10m, 600s, 1h) or off, kept as given (options.py reads its seconds)."""
    try:
        parse_duration("--oracle-budget", value)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return value
