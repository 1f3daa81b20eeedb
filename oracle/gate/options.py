"""Gate options read: the core options (declared in oracle/gate/declarations.py) read here, once, and each
package's through its own reader (the families' `settings_of`, the ledger's, the plan's, each check kind's), cross-
checked with the fix in every message and frozen for the run.

    options = gate_options(config)          # GateOptions, each check kind's settings in options.check(name)
    options_of(config).check(name)          # the same, where only the config is at hand (collection hooks)

Values stay plain str / int / float / bool and tuples of them so pytest-xdist can ship them to workers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from oracle.backends import parse_backend
from oracle.checks import CHECKS, OptionContext, check_named
from oracle.compare.modes import COMPARE_MODES
from oracle.gate.declarations import DEFAULT_TOP_K, F16_GATE_TOP_K, REFERENCE_TOP_K
from oracle.gate.family_checks import check_family_options
from oracle.launch_command import port_refusal
from oracle.ledger.options import ledger_settings
from oracle.plan.options import plan_settings
from oracle.redaction import remember_secrets
from oracle.run.sampling import Sampling
from oracle.run.sampling_options import SAMPLING_CHECKS, sampling_of
from oracle.store.folder_safety import Place, name_refusal
from oracle.store.json_files import InputFileError, read_text
from oracle.targets.families import target_of

__all__ = ["DEFAULT_TOP_K", "F16_GATE_TOP_K", "OPTIONS_KEY", "REFERENCE_TOP_K", "GateOptions", "gate_options",
           "options_of", "xdist_role", "xdist_workers"]


@dataclass(frozen=True)
class GateOptions:
    backend: str
    urls: tuple[str, ...]  # --oracle-url / --servers: servers already running, one per xdist worker
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
    # The family's load keywords (its options module's settings_of: hf's dtype, openvino's ov_config, python's
    # runner_args), handed to its backend alone.
    family_settings: tuple[tuple[str, Any], ...] = ()
    floor_dtype: str = "bfloat16"
    logits: bool = False
    workers: int = 1  # pytest-xdist workers (1 without -n); each has its own server
    allow_mixed_servers: bool = False
    warmup: int = 1  # throwaway requests before the c1 run
    launch_timeout: int = 600  # seconds a launched or embedded server may take to become healthy
    sampling: Sampling | None = None  # --temperature (--top-p, --oracle-seed, --seeds); None: greedy
    sampling_check: str = SAMPLING_CHECKS[0]  # tokens, or distribution (compare/distribution.py)
    machine: str | None = None  # --oracle-machine: the fleet's name for this machine; None: the host name
    ledger: str | None = None  # --ledger: a SQLite path, a PostgreSQL URL or "off"; None: beside the report folder
    checks: tuple[tuple[str, Any], ...] = ()  # each check kind's settings (oracle/checks/<kind>/options.py)
    budget: float | None = None  # --oracle-budget in seconds: needles of the default lengths past it are dropped; None: off
    budget_source: str = ""  # "--oracle-budget 10m", or why the default applies
    plan_only: bool = False  # --oracle-plan: print the run plan after the warm-up and exit
    localize: bool = False  # --localize: `oracle localize` on this run's report when a prompt's tokens split
    compare: str = COMPARE_MODES[0]  # --oracle-compare: "logprobs" also holds every returned logprob bit for bit
    allow_logprobs_moved: bool = False  # --allow-logprobs-moved: pass logprobs-moved items

    def check(self, name: str):
        """The settings of the check kind `name`: as read from its options, else its defaults."""
        return dict(self.checks).get(name, check_named(name).defaults)

    @property
    def dtype(self) -> str:
        """The dtype an in-process family loads the weights in (float32 where its load takes none): what a
        precision floor and a logits record are compared against."""
        return dict(self.family_settings).get("dtype", "float32")

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
        if any(c.isspace() for c in url):  # httpx quotes a space into the host and asks DNS for it
            raise httpx.InvalidURL("a space in it")
        parsed = httpx.URL(url)
        if not parsed.host:
            raise httpx.InvalidURL("no host")
        if parsed.port is not None and not 0 < parsed.port < 65536:  # httpx keeps 99999 and fails at connect
            raise httpx.InvalidURL(f"port {parsed.port} is not 1..65535")
    except (httpx.InvalidURL, ValueError) as exc:
        return (f"not a valid URL ({exc}); write http://HOST:PORT, e.g. http://127.0.0.1:8080 or "
                "http://[::1]:8080")
    return None


def _server_urls(option) -> tuple[str, ...]:
    urls = [u.strip() for u in (option.oracle_url or "").split(",") if u.strip()]
    where = {u: "server URL" for u in urls}  # each URL's source, as a refusal names it
    if option.oracle_url is not None and not urls:  # `--oracle-url=` (an unset variable): never the embedded default in its place
        raise pytest.UsageError(f"--oracle-url {option.oracle_url!r}: no URL in it; give the running server, e.g. "
                                "--oracle-url http://127.0.0.1:8080, or leave --oracle-url out for the embedded default")
    if option.servers:
        path = Path(option.servers)
        if not path.is_file():
            raise pytest.UsageError(f"--servers {option.servers}: no such file; give a file with one server URL per line")
        try:
            text = read_text(path, fix="write the file as UTF-8 text, one server URL per line")
        except InputFileError as exc:
            raise pytest.UsageError(f"--servers {exc}") from None
        for n, line in enumerate(text.splitlines(), 1):
            url = line.split("#")[0].strip()
            if url:
                urls.append(url)
                where.setdefault(url, f"--servers {option.servers} line {n}:")
        if not urls:
            raise pytest.UsageError(f"--servers {option.servers}: the file lists no URL; write one URL per line, "
                                    "e.g. http://127.0.0.1:8080")
    for u in urls:
        if not u.startswith(("http://", "https://")):
            raise pytest.UsageError(f"{where[u]} {u!r}: must start with http:// or https://, e.g. "
                                    "http://127.0.0.1:8080" + (" (the file is plain text, one URL per line)"
                                                               if where[u] != "server URL" else ""))
        url_refusal = _url_refusal(u)
        if url_refusal:
            raise pytest.UsageError(f"{where[u]} {u!r}: {url_refusal}")
    dupes = sorted({u for u in urls if urls.count(u) > 1})
    if dupes:
        raise pytest.UsageError(f"server URL {dupes[0]} is listed twice: each worker needs a server of its own")
    return tuple(u.rstrip("/") for u in urls)


def _default_budget(backend: str, *, embedded_default: bool) -> str | None:
    """The budget of a run on the target's embedded default (its CPU build has one of its own), else None."""
    target = target_of(backend)
    serves = target.embedded is not None and target.embedded.serves(parse_backend(backend).platform)
    return target.default_budget if serves and embedded_default else None


def gate_options(config: pytest.Config) -> GateOptions:
    """Read and cross-check the options; raise UsageError naming the fix."""
    o = config.option
    # Before anything is refused: a refusal may quote a command or URL that holds a key.
    ledger = ledger_settings(o)
    remember_secrets(commands=[o.launch, o.server_args], urls=[*(o.oracle_url or "").split(","), ledger["ledger"]])
    for option, dest in (("--report-dir", "report_dir"), ("--record", "record"), ("--reference", "reference"),
                         ("--oracle-suite", "oracle_suite"), ("--servers", "servers")):  # before any path is looked at
        value = getattr(o, dest)
        refusal = name_refusal(Place(option, Path(value))) if value else None
        if refusal:
            raise pytest.UsageError(refusal)
    urls = _server_urls(o)
    workers = xdist_workers(config)
    if urls and o.launch:
        raise pytest.UsageError("--oracle-url/--servers and --launch both given: use --oracle-url for a running server "
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
    if (urls or o.launch) and (o.oracle_model or o.server_args):
        raise pytest.UsageError("--oracle-model and --server-args configure the embedded default; with --oracle-url or "
                                "--launch put the model and flags in the server's own command")
    if o.allow_mixed_servers and len(urls) < 2:  # an option without effect is refused, not ignored
        raise pytest.UsageError("--allow-mixed-servers has no effect with one server (it lets servers of different "
                                "configurations be gated together): give several with --oracle-url A,B or --servers FILE "
                                "and -n, or leave --allow-mixed-servers out")
    if o.record and o.reference:  # a gate writes no reference: --record would be silently ignored
        raise pytest.UsageError(f"--record {o.record} and --reference {o.reference} both given: --record saves this "
                                "run as a new reference, --reference gates it against one; give one of them "
                                f"(record first with --record {o.record}, then gate with --reference "
                                f"{o.record})")
    from oracle.backends import family_of

    family = family_of(o.backend)
    check_family_options(o, family, SimpleNamespace(
        backend=o.backend, urls=urls, launch=o.launch, server_args=o.server_args, model=o.oracle_model,
        localize=o.localize, reference=o.reference, floor_dtype=o.floor_dtype))
    context = OptionContext(urls, workers, family, o.backend, o.reference)
    checks = tuple((c.name, c.settings(o, context)) for c in CHECKS if c.settings is not None)
    sampling = sampling_of(o, family, workers, backend=o.backend, logits=o.logits, reference=o.reference,
                           seed=o.oracle_seed)
    if o.oracle_compare == "logprobs" and sampling["sampling"] is not None and o.logprobs is None:
        # Sampled runs ask for no logprobs unless told (gate/plan.py): there would be none to compare.
        raise pytest.UsageError("--oracle-compare logprobs with --temperature: sampled runs ask for no logprobs by "
                                "default; give --logprobs N (e.g. --logprobs 5) or use --oracle-compare tokens")
    default_budget = _default_budget(o.backend, embedded_default=not (urls or o.launch or o.oracle_model))
    options = GateOptions(
        backend=o.backend, urls=urls, launch=o.launch, model=o.oracle_model,
        server_args=o.server_args or "", tokenizer=o.tokenizer, suite=o.oracle_suite,
        record=Path(o.record) if o.record else None, record_overwrite=o.record_overwrite,
        reference_kind=o.reference_kind, reference=Path(o.reference) if o.reference else None,
        report_dir=Path(o.report_dir) if o.report_dir else None, logprobs=o.logprobs, max_tokens=o.max_tokens,
        seed=o.oracle_seed, request_timeout=o.request_timeout, near_tie_nats=o.near_tie_nats, allow_near_ties=o.allow_near_ties,
        allow_inconclusive=o.allow_inconclusive,
        family_settings=tuple(family.settings(o).items()) if family.settings is not None else (),
        floor_dtype=o.floor_dtype or "bfloat16", logits=o.logits,
        workers=workers, allow_mixed_servers=o.allow_mixed_servers, warmup=o.warmup,
        launch_timeout=o.launch_timeout,
        checks=checks,
        localize=o.localize,
        compare=o.oracle_compare, allow_logprobs_moved=o.allow_logprobs_moved,
        **sampling, **ledger, **plan_settings(o, workers=workers, default=default_budget),
    )
    return options
