"""Every gate option declared once, on pytest's parser: its name, type (the validating types of
`option_types.py`, so a bad value is a usage error naming the fix), default and help. `options.py` reads them back
into the frozen `GateOptions` and cross-checks them.

Light, like every module it imports: the plugin declares these in every pytest session of an environment where
oracle is installed, with or without --backend (a test keeps the set of modules they import).

    add_options(parser)     # from the plugin's pytest_addoption
"""

from __future__ import annotations

import re
import shlex

import pytest

from oracle.checks import add_check_options
from oracle.option_types import (DEFAULT_BUDGET, INCONCLUSIVE_KINDS, backend_name, bounded, budget_value,
                                 dtype, existing_path, inconclusive_kinds, ledger_target,
                                 non_negative_int, ov_config, positive_int, top_k,
                                 reference_kind, runner_arg, seed, shell_command)
from oracle.option_ledger import machine_name
from oracle.redaction import redact_command
from oracle.sweep.grid import parse_axis

__all__ = ["BACKEND_FAMILIES", "COMPARE_MODES", "DEFAULT_TOP_K", "F16_GATE_TOP_K", "REFERENCE_TOP_K", "add_options",
           "compare_mode",
           "dash_value_refusal", "gate_options_given"]

# --logprobs when not given: what an f16 reference stores, what a candidate is asked for against one, else.
REFERENCE_TOP_K, F16_GATE_TOP_K, DEFAULT_TOP_K = 64, 20, 5

# The backend families with their few words (oracle.backends.backend_help(), which imports every family's client:
# a test keeps the two equal).
BACKEND_FAMILIES = ("llamacpp (llama-server's native /completion); "
                    "vllm (vLLM's OpenAI API with its ids, salts and counters); openai (any OpenAI-compatible server); "
                    "hf (transformers in this process); openvino (an OpenVINO IR on GenAI's pipeline in this process); "
                    "python (your own runner object in this process (python:MODULE:FACTORY, docs/runner.md))")

_nats = bounded("--near-tie-nats", "a number of nats", "0.5", 0, 50)

# --oracle-compare: what every comparison holds equal: the token arrays, or those and the returned logprobs too.
COMPARE_MODES = ("tokens", "logprobs")


def compare_mode(value: str) -> str:
    if value not in COMPARE_MODES:
        raise pytest.UsageError(f"--oracle-compare {value!r}: must be tokens (complete token arrays equal) or "
                                "logprobs (tokens equal and every returned top-k logprob bit-identical as float32)")
    return value


def add_options(parser: pytest.Parser) -> None:
    """The core gate options on the `oracle` group, then each check kind's on its own group (oracle/checks/)."""
    _gate_options(parser)
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


def _gate_options(parser: pytest.Parser) -> None:
    g = parser.getgroup("oracle", "oracle: gate an inference server against a reference")
    g.addoption("--backend", metavar="NAME", type=backend_name, default=None,
                help=f"family[-platform] of what is gated, e.g. llamacpp-sycl, vllm-xpu, hf-cpu; the "
                     f"families: {BACKEND_FAMILIES}; turns the gate on (default: off, the project's own tests "
                     "run)")
    g.addoption("--oracle-url", metavar="URL[,URL...]", default=None,
                help="a server that is already running; several comma-separated servers of one configuration "
                     "take one pytest-xdist worker each (pytest -n N) (default: none)")
    g.addoption("--servers", metavar="FILE", default=None,
                help="a file with one server URL per line (# comments allowed), like a --oracle-url list (default: none)")
    g.addoption("--allow-mixed-servers", action="store_true", default=False,
                help="gate several servers whose identities differ (default: refuse, naming the fields)")
    g.addoption("--launch", metavar="CMD", type=shell_command("--launch"), default=None,
                help="start this server command, with {port} replaced by a free loopback port and {worker} by "
                     "the pytest-xdist worker number (0 without -n), e.g. CUDA_VISIBLE_DEVICES={worker} "
                     "(default: none; without --oracle-url or --launch the embedded llama-server + SmolLM2-135M is started)")
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
    g.addoption("--oracle-suite", metavar="NAME|PATH", default="default", help="prompt suite (default: default)")
    g.addoption("--record", metavar="DIR", default=None, help="save this run as a reference in DIR (default: off)")
    g.addoption("--record-overwrite", action="store_true", default=False,
                help="allow --record to replace an existing reference (default: refuse)")
    g.addoption("--reference-kind", metavar="KIND", type=reference_kind, default="mtp0",
                help="kind of reference --record writes: mtp0 or f16 (default: mtp0)")
    g.addoption("--reference", metavar="DIR", default=None, help="gate this run against the reference in DIR")
    g.addoption("--report-dir", metavar="DIR", default=None,
                help="where the identity report goes (default: reports/<UTC time>-<backend>/)")
    g.addoption("--ledger", metavar="PATH|URL", type=ledger_target, default=None,
                help="the run ledger this run appends to as it finishes: a SQLite file, a "
                     "postgresql://user@host/db URL (a shared ledger), or off (default: ledger.sqlite beside the "
                     "report folder, reports/ledger.sqlite)")
    g.addoption("--oracle-machine", metavar="NAME", type=machine_name, default=None,
                help="the name this machine has in the report and the ledger, e.g. its CI runner's label; "
                     "`oracle fleet` lines machines up by it (default: the host name)")
    g.addoption("--logprobs", metavar="N", type=top_k("--logprobs"), default=None,
                help=f"top logprobs kept per position (default: {REFERENCE_TOP_K} when recording an f16 reference, "
                     f"{F16_GATE_TOP_K} when gating against one (vLLM's own cap unless its --max-logprobs), "
                     f"0 with --temperature, else {DEFAULT_TOP_K}; not the sampler's top-k)")
    g.addoption("--max-tokens", metavar="N", type=positive_int("--max-tokens"), default=None,
                help="override every prompt's max_tokens (default: the suite's)")
    g.addoption("--request-timeout", metavar="S", type=positive_int("--request-timeout"), default=600,
                help="seconds a whole request may take (streamed tokens and keep-alive comments do not extend it); "
                     "the run then stops, never retried (default: 600)")
    g.addoption("--launch-timeout", metavar="S", type=positive_int("--launch-timeout"), default=600,
                help="seconds a launched or embedded server may take to answer its health check; it is then "
                     "stopped and the run refused with the end of its log (default: 600)")
    g.addoption("--oracle-seed", metavar="N", type=seed, default=1234, help="request seed (default: 1234)")
    g.addoption("--near-tie-nats", metavar="X", type=_nats, default=0.5,
                help="reference margin below which a split is a near-tie (default: 0.5)")
    g.addoption("--allow-near-ties", action="store_true", default=False,
                help="pass near-tie items (still reported) (default: fail them)")
    g.addoption("--localize", action="store_true", default=False,
                help="when a prompt's tokens split, name the first layer where the candidate computes something "
                     "else than the reference (`oracle localize` on this run's report, in-process families; "
                     "written to <report-dir>-localize/); nothing runs on a gate that passes (default: off)")
    g.addoption("--oracle-compare", metavar="WHAT", type=compare_mode, default="tokens",
                help="what every comparison (the reference, a ladder level, a neighbour run, a boot, the within-boot "
                     "repeat) holds equal: tokens (the complete token arrays) or logprobs (those, and every returned "
                     "top-k logprob bit for bit as the float32 the records keep; tokens equal and logprobs not is "
                     "logprobs-moved) (default: tokens)")
    g.addoption("--allow-logprobs-moved", action="store_true", default=False,
                help="pass logprobs-moved items of --oracle-compare logprobs (still reported; the headline names "
                     "them) (default: fail them)")
    g.addoption("--allow-inconclusive", metavar="KIND,...", type=inconclusive_kinds, default="",
                help=f"pass inconclusive items of these kinds: {', '.join(INCONCLUSIVE_KINDS)} (default: none)")
    g.addoption("--warmup", metavar="N", type=non_negative_int("--warmup"), default=1,
                help="throwaway requests of a fixed prompt outside the suite before the c1 run, excluded from "
                     "verdicts and speed; a speed card is headline only after one (default: 1)")
    g.addoption("--oracle-budget", metavar="DURATION", type=budget_value, default=None,
                help="time the run may take by the plan's estimate (e.g. 10m, 600s, or off): needles of the default "
                     "lengths that do not fit are dropped, each named with its estimate and the --needle-lengths "
                     f"that runs it (default: {DEFAULT_BUDGET} for the embedded CPU default, else off)")
    g.addoption("--oracle-plan", action="store_true", default=False, dest="plan_only",
                help="print the run plan (requests, tokens and estimated time per part, from the rates the "
                     "warm-up measured) and exit 0 without sending any request beyond the warm-up; no report "
                     "folder is left (default: off)")
    g.addoption("--dtype", metavar="DTYPE", type=dtype, default=None,
                help="weights and compute dtype of the in-process hf backend: float32, float16 or bfloat16 "
                     "(default: float32)")
    g.addoption("--ov-config", metavar="KEY=VALUE,...", type=ov_config, default=(),
                help="OpenVINO properties of the in-process openvino backend's pipeline (recorded in identity), e.g. "
                     "INFERENCE_PRECISION_HINT=f32,KV_CACHE_PRECISION=f32,DYNAMIC_QUANTIZATION_GROUP_SIZE=0 "
                     "(default: the device's own)")
    g.addoption("--runner-arg", metavar="NAME=VALUE", type=runner_arg, action="append", default=None,
                help="a keyword argument (a string) for the factory of --backend=python:MODULE:FACTORY, e.g. "
                     "--runner-arg ir=int4; repeat it for several (default: none)")
    g.addoption("--sweep", metavar="SETTING=V1,V2", action="append", type=parse_axis, default=[],
                help="gate each point of a grid of settings against --reference, each its own gate run: a launch flag "
                     "(write --sweep=-ctk=f16,q8_0: with '=', as argparse reads a value starting with '-' as an "
                     "option), an environment variable (--sweep=OMP_NUM_THREADS=1,2), or with the embedded server a "
                     "--server-args flag; several make a grid (default: none; see docs/sweep.md)")
    g.addoption("--sweep-max", metavar="N", type=positive_int("--sweep-max"), default=None,
                help="run only the first N points of the --sweep grid (a partial sweep, exit 2) (default: all)")
    g.addoption("--sweep-no-repro", action="store_true", default=False,
                help="do not reduce the sweep's first point that splits from the reference to a repro (default: "
                     "`oracle repro` on it)")
