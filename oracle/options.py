"""Gate options: declared once, validated with the fix in every message, frozen for the run.

    options = gate_options(config)          # GateOptions, each check kind's settings in options.check(name)
    options_of(config).canary.kinds         # the same, where only the config is at hand (collection hooks)

Values stay plain str / int / float / bool and tuples of them so pytest-xdist can ship them to workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from oracle.launch_command import port_refusal
from oracle.checks import CHECKS, OptionContext, check_named
from oracle.option_declarations import (DEFAULT_SPEED_REPEATS, DEFAULT_TOP_K, F16_GATE_TOP_K, REFERENCE_TOP_K,
                                        add_options)
from oracle.option_families import check_family_options
from oracle.option_sampling import sampling_of
from oracle.option_types import INCONCLUSIVE_KINDS, positive_int
from oracle.run.sampling import Sampling
from oracle.speed_options import InterleaveOptions, speed_settings
from oracle.store.json_files import InputFileError, read_text
from oracle.store.folder_safety import Place, name_refusal

__all__ = ["DEFAULT_TOP_K", "F16_GATE_TOP_K", "INCONCLUSIVE_KINDS", "OPTIONS_KEY", "REFERENCE_TOP_K",
           "GateOptions", "add_options", "gate_options", "options_of", "positive_int", "xdist_role", "xdist_workers"]


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
    workers: int = 1  # pytest-xdist workers (1 without -n); each has its own server
    allow_mixed_servers: bool = False
    warmup: int = 1  # throwaway requests before the c1 run
    min_speedup: float | None = None  # the speed item's bar (None: speed reported, not judged)
    speed_cells: tuple[tuple[int, int], ...] = ()  # (prompt tokens, generated tokens) per cell; () no cells
    speed_repeats: int = 5  # repeats per cell
    launch_timeout: int = 600  # seconds a launched or embedded server may take to become healthy
    power: str = "auto"  # or "off": no energy meters, no isolation probe around the timed run (speed/power.py)
    ladder_arrivals: str = "at-once"  # or "staggered": a wave's requests sent while its first decodes
    runner_args: tuple[tuple[str, str], ...] = ()  # --runner-arg: the python runner's factory keywords
    interleave: InterleaveOptions = field(default_factory=InterleaveOptions)  # --reference-launch (speed_options.py)
    sampling: Sampling | None = None  # --temperature (--top-p, --seed, --seeds); None: greedy
    sampling_check: str = "tokens"  # or "distribution" (compare/distribution.py)
    ledger: str | None = None  # --ledger: a SQLite path, a PostgreSQL URL or "off"; None: beside the report folder
    checks: tuple[tuple[str, Any], ...] = ()  # each check kind's settings (oracle/checks/<kind>/options.py)

    def check(self, name: str):
        """The settings of the check kind `name`: as read from its options, else its defaults."""
        return dict(self.checks).get(name, check_named(name).defaults)

    @property
    def canary(self):
        """The canaries' settings (oracle/checks/canaries/options.py), as the canary plan and modules and the
        speed cells' haystack read them."""
        return self.check("canaries")

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


def _url_refusal(url: str) -> str | None:
    """Why httpx cannot use the URL (an unclosed IPv6 bracket, a bad port, no host), with the fix; None if it can."""
    import httpx

    try:
        parsed = httpx.URL(url)
        if not parsed.host:
            raise httpx.InvalidURL("no host")
    except (httpx.InvalidURL, ValueError) as exc:
        return (f"not a valid URL ({exc}); write http://HOST:PORT, e.g. http://127.0.0.1:8080 or "
                "http://[::1]:8080")
    return None


def _server_urls(o) -> tuple[str, ...]:
    urls = [u.strip() for u in (o.url or "").split(",") if u.strip()]
    if o.servers:
        path = Path(o.servers)
        if not path.is_file():
            raise pytest.UsageError(f"--servers {o.servers}: no such file; give a file with one server URL per line")
        try:
            text = read_text(path, fix="write the file as UTF-8 text, one server URL per line")
        except InputFileError as exc:
            raise pytest.UsageError(f"--servers {exc}") from None
        urls += [line.split("#")[0].strip() for line in text.splitlines() if line.split("#")[0].strip()]
        if not urls:
            raise pytest.UsageError(f"--servers {o.servers}: the file lists no URL; write one URL per line, "
                                    "e.g. http://127.0.0.1:8080")
    for u in urls:
        if not u.startswith(("http://", "https://")):
            raise pytest.UsageError(f"server URL {u!r}: must start with http:// or https://, e.g. http://127.0.0.1:8080")
        url_refusal = _url_refusal(u)
        if url_refusal:
            raise pytest.UsageError(f"server URL {u!r}: {url_refusal}")
    dupes = sorted({u for u in urls if urls.count(u) > 1})
    if dupes:
        raise pytest.UsageError(f"server URL {dupes[0]} is listed twice: each worker needs a server of its own")
    return tuple(u.rstrip("/") for u in urls)


def gate_options(config: pytest.Config) -> GateOptions:
    """Read and cross-check the options; raise UsageError naming the fix."""
    o = config.option
    for option in ("--report-dir", "--record", "--reference", "--suite", "--servers"):  # before any path is looked at
        value = getattr(o, option[2:].replace("-", "_"))
        refusal = name_refusal(Place(option, Path(value))) if value else None
        if refusal:
            raise pytest.UsageError(refusal)
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
    if o.launch is not None:
        if not o.launch.strip():
            raise pytest.UsageError("--launch '': an empty command; give the server's command with {port} where its "
                                    "port goes (e.g. --launch 'llama-server -m MODEL --port {port}'), or leave "
                                    "--launch out for the embedded default")
        refusal = port_refusal("--launch", o.launch)
        if refusal:
            raise pytest.UsageError(refusal)
    if (urls or o.launch) and (o.model or o.server_args):
        raise pytest.UsageError("--model and --server-args configure the embedded default; with --url or "
                                "--launch put the model and flags in the server's own command")
    if o.record and o.reference:  # a gate writes no reference: --record would be silently ignored
        raise pytest.UsageError(f"--record {o.record} and --reference {o.reference} both given: --record saves this "
                                "run as a new reference, --reference gates it against one; give one of them "
                                f"(record first with --record {o.record}, then gate with --reference "
                                f"{o.record})")
    check_family_options(o, urls)
    if o.boots > 1 and urls:
        raise pytest.UsageError(f"--boots {o.boots} needs a server oracle can restart: use --launch CMD "
                                "(or the embedded default) instead of --url")
    ladder = tuple(o.ladder)
    unknown = [c for c, _, _ in o.ladder_min if c not in ladder]
    if unknown:
        raise pytest.UsageError(f"--ladder-min names c{unknown[0]}, which is not a --ladder level; "
                                f"add {unknown[0]} to --ladder or drop it from --ladder-min")
    from oracle.backends import family_of

    family = family_of(o.backend)
    min_speedup, interleave = speed_settings(o, urls=urls, workers=workers, in_process=family.in_process)
    if o.speed_repeats is not None and not o.speed_cells:
        raise pytest.UsageError(f"--speed-repeats {o.speed_repeats} repeats speed cells: add --speed-cells CELLS "
                                "(e.g. --speed-cells field), or drop --speed-repeats")
    if o.speed_cells and workers > 1:
        raise pytest.UsageError(f"--speed-cells measures one server alone; with -n {workers} the servers run at once "
                                "and share the machine: measure cells without -n")
    context = OptionContext(urls, workers, family)
    checks = tuple((c.name, c.settings(o, context)) for c in CHECKS if c.settings is not None)
    sampling = sampling_of(o, family, workers)
    if o.boots > 1 and 1 not in ladder:
        ladder = (1,) + ladder  # the within-boot repeat that tells "within a boot only" from "not even"
    options = GateOptions(
        backend=o.backend, urls=urls, launch=o.launch, model=o.model,
        server_args=o.server_args or "", tokenizer=o.tokenizer, suite=o.suite,
        record=Path(o.record) if o.record else None, record_overwrite=o.record_overwrite,
        reference_kind=o.reference_kind, reference=Path(o.reference) if o.reference else None,
        report_dir=Path(o.report_dir) if o.report_dir else None, logprobs=o.logprobs, max_tokens=o.max_tokens,
        seed=o.seed, request_timeout=o.request_timeout, near_tie_nats=o.near_tie_nats, allow_near_ties=o.allow_near_ties,
        allow_inconclusive=o.allow_inconclusive,
        speculative=o.speculative, ladder=ladder, ladder_mode=o.ladder_mode, ladder_min=tuple(o.ladder_min),
        boots=o.boots, dtype=o.dtype or "float32", ov_config=tuple(o.ov_config),
        floor_dtype=o.floor_dtype or "bfloat16", logits=o.logits,
        workers=workers, allow_mixed_servers=o.allow_mixed_servers, warmup=o.warmup, min_speedup=min_speedup,
        launch_timeout=o.launch_timeout, speed_cells=tuple(o.speed_cells),
        speed_repeats=o.speed_repeats or DEFAULT_SPEED_REPEATS, power=o.power,
        ladder_arrivals=o.ladder_arrivals,
        interleave=interleave, checks=checks,
        runner_args=tuple(o.runner_arg or ()),
        sampling=sampling, sampling_check=o.sampling_check, ledger=o.ledger,
    )
    return options
