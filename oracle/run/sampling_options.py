"""The run's sampling options: `--temperature` and the options that only mean something with it (`--top-p`,
`--seeds`, `--sampling-check`), cross-checked into a `Sampling` (None: greedy) that every request of the run
follows. Declared on the sampled-decoding group (oracle/checks/sampling_distribution/options.py, whose check adds
`--max-shift` and `--score-url`); light: no part of the run is imported until they are read.

    add_sampling_options(group)
    sampling_of(config.option, family, workers, backend=..., logits=..., reference=..., seed=...)
    # {"sampling": Sampling(...) or None (greedy), "sampling_check": "tokens"}
"""

from __future__ import annotations

import pytest

from oracle.validators import one_of, positive_int

__all__ = ["SAMPLING_CHECKS", "add_sampling_options", "sampling_check", "sampling_of", "temperature", "top_p"]

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


sampling_check = one_of("--sampling-check", SAMPLING_CHECKS, "must be tokens (the same tokens per seed) or "
                        "distribution (the candidate's samples scored under the reference model)")


def add_sampling_options(g) -> None:
    g.addoption("--temperature", metavar="T", type=temperature, default=None,
                help="sample instead of greedy decoding, at this temperature (top_k 0 and min_p 0 sent too, so only "
                     "the stated settings apply); the reference records the settings and refuses a gate with others "
                     "(default: greedy)")
    g.addoption("--top-p", metavar="P", type=top_p, default=None,
                help="with --temperature, the nucleus kept (default: 1, no cut)")
    g.addoption("--seeds", metavar="N", type=positive_int("--seeds"), default=None,
                help="with --temperature, N seeds per prompt: --oracle-seed, --oracle-seed+1, ...; each a record ID~sSEED "
                     "(default: 1)")
    g.addoption("--sampling-check", metavar="HOW", type=sampling_check, default="tokens",
                help="with --temperature: tokens (the same tokens per seed, the token match rate) or distribution "
                     "(the candidate's samples and the reference's scored under the reference model, for a candidate "
                     "whose tokens may differ by design, e.g. speculative) (default: tokens)")


def sampling_of(option, family, workers: int, *, backend: str, logits: bool, reference: str | None, seed: int) -> dict:
    """GateOptions' sampling (None: greedy) and sampling_check: --temperature and the options that only mean
    something with it, cross-checked against the run's values read elsewhere (--backend, --logits, --reference,
    --oracle-seed, and the distribution check's --score-url, which it needs)."""
    from oracle.run.sampling import Sampling  # with the gate only: the declarations stay light

    distribution = option.sampling_check == "distribution"
    if option.temperature is None:
        alone = [flag for flag, given in (("--top-p", option.top_p is not None), ("--seeds", option.seeds is not None),
                                          ("--sampling-check distribution", distribution),
                                          ("--score-url", option.score_url is not None)) if given]
        if alone:
            raise pytest.UsageError(f"{', '.join(alone)} without --temperature: a greedy run has no sampling; add "
                                    "--temperature T (e.g. 0.8) or drop them")
        return {"sampling": None, "sampling_check": option.sampling_check}
    if family.capabilities.sampling is None:
        raise pytest.UsageError(f"--temperature with --backend {backend}: this family is gated greedy only (seeded "
                                "sampling is proven on llama-server); use --backend=llamacpp or drop --temperature")
    if logits:
        raise pytest.UsageError("--temperature with --logits: logits are compared along a greedy reference path; "
                                "drop one of them")
    if distribution and not (reference and option.score_url):
        raise pytest.UsageError("--sampling-check distribution scores both sides' samples under the reference "
                                "model: give --reference DIR and --score-url URL (a running server of the "
                                "reference's model and config)")
    if distribution and workers > 1:
        raise pytest.UsageError(f"--sampling-check distribution tests every sequence in one place; run it "
                                f"without -n {workers}")
    if option.score_url and not option.score_url.startswith(("http://", "https://")):
        raise pytest.UsageError(f"--score-url {option.score_url!r}: must start with http:// or https://, e.g. "
                                "http://127.0.0.1:8080")
    seeds = tuple(range(seed, seed + (option.seeds or 1)))
    return {"sampling": Sampling(option.temperature, 1.0 if option.top_p is None else option.top_p, seeds),
            "sampling_check": option.sampling_check}
