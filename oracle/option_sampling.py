"""--temperature and the options that only mean something with it (--top-p, --seeds, --sampling-check,
--max-shift, --score-url): declared on the sampled-decoding group, cross-checked into a `Sampling` (None: greedy).

    add_sampling_options(group)                     # from oracle/checks/sampling_distribution/options.py
    sampling = sampling_of(config.option, family, workers)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from oracle.option_types import bounded, positive_int, sampling_check, temperature, top_p

if TYPE_CHECKING:
    from oracle.run.sampling import Sampling

__all__ = ["add_sampling_options", "sampling_of"]

_shift = bounded("--max-shift", "a shift in nats per token", "0.1", 0, 100)


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
    g.addoption("--max-shift", metavar="NATS", type=_shift, default=0.1,
                help="with --sampling-check distribution: the shift of mean per-token log-likelihood the run must "
                     "be able to detect (95%% level, 80%% power), else insufficient (default: 0.1)")
    g.addoption("--score-url", metavar="URL", default=None,
                help="with --sampling-check distribution: a running server of the reference's model and config "
                     "that scores both sides' sampled tokens by teacher forcing (default: none)")


def sampling_of(o, family, workers: int) -> Sampling | None:
    """--temperature and the options that only mean something with it, cross-checked."""
    from oracle.run.sampling import Sampling  # with the gate only: the declarations stay light

    distribution = o.sampling_check == "distribution"
    if o.temperature is None:
        alone = [flag for flag, given in (("--top-p", o.top_p is not None), ("--seeds", o.seeds is not None),
                                          ("--sampling-check distribution", distribution),
                                          ("--score-url", o.score_url is not None)) if given]
        if alone:
            raise pytest.UsageError(f"{', '.join(alone)} without --temperature: a greedy run has no sampling; add "
                                    "--temperature T (e.g. 0.8) or drop them")
        return None
    if family.capabilities.sampling is None:
        raise pytest.UsageError(f"--temperature with --backend {o.backend}: this family is gated greedy only (seeded "
                                "sampling is proven on llama-server); use --backend=llamacpp or drop --temperature")
    if o.logits:
        raise pytest.UsageError("--temperature with --logits: logits are compared along a greedy reference path; "
                                "drop one of them")
    if distribution and not (o.reference and o.score_url):
        raise pytest.UsageError("--sampling-check distribution scores both sides' samples under the reference "
                                "model: give --reference DIR and --score-url URL (a running server of the "
                                "reference's model and config)")
    if distribution and workers > 1:
        raise pytest.UsageError(f"--sampling-check distribution tests every sequence in one place; run it "
                                f"without -n {workers}")
    if o.score_url and not o.score_url.startswith(("http://", "https://")):
        raise pytest.UsageError(f"--score-url {o.score_url!r}: must start with http:// or https://, e.g. "
                                "http://127.0.0.1:8080")
    seeds = tuple(range(o.oracle_seed, o.oracle_seed + (o.seeds or 1)))
    return Sampling(o.temperature, 1.0 if o.top_p is None else o.top_p, seeds)
