"""The gate's check kinds: one package per kind (`oracle/checks/<kind>/`), each declaring all of itself in one
`CheckDescriptor` (its options, settings, items, producers, report state and sections; check.py), and `CHECKS`
(registry.py), the one place that lists them. The gate (oracle/gate/) is the engine that reads them; it names no
check.

    for check in CHECKS: specs += check.items(plan)        # the gate's items
    state = read_state(json.loads(path.read_text()))       # a report typed again, every check's state included
    add_check_options(parser)                              # each kind's --help group, from its options.py alone

`INCONCLUSIVE_KINDS`, what `--allow-inconclusive` takes, is the union of the kinds each package declares
(`oracle/checks/<kind>/__init__.py`'s `INCONCLUSIVE`), in the order of `CHECKS`.

This package, each kind's package and its options.py are light: the plugin declares the options in every pytest
session of an environment where oracle is installed, so they import none of the gate's machinery. `CHECKS` and
the names below load the descriptors (registry.py) on first use.
"""

from __future__ import annotations

from oracle.checks import (cache_zero, canaries, conditions, coverage, decode_vs_prefill, logits, neighbours,
                           prompt_logprob, sampling_distribution, speculation, speed, speed_ab, speed_cells, tokens)
from oracle.checks.canaries import options as _canaries
from oracle.checks.conditions import options as _conditions
from oracle.checks.coverage import options as _coverage
from oracle.checks.decode_vs_prefill import options as _decode_vs_prefill
from oracle.checks.logits import options as _logits
from oracle.checks.neighbours import options as _neighbours
from oracle.checks.prompt_logprob import options as _prompt_logprob
from oracle.checks.sampling_distribution import options as _sampling_distribution
from oracle.checks.speculation import options as _speculation
from oracle.checks.speed import options as _speed
from oracle.checks.speed_ab import options as _speed_ab
from oracle.checks.speed_cells import options as _speed_cells

_REGISTRY = ("CHECKS", "SECTIONS", "CheckDescriptor", "CheckItem", "CheckParts", "CheckState", "Finding",
             "OptionContext", "Producers", "STATE_TYPES", "check_named", "fresh_states", "not_run", "read_state",
             "state_part")

__all__ = sorted(["INCONCLUSIVE_KINDS", "KIND_PACKAGES", "OPTION_MODULES", "add_check_options", *_REGISTRY])

# Each kind's package, in the order of CHECKS (registry.py; a test keeps the two in step): light, as each
# declares its descriptor in check.py, loaded on first use.
KIND_PACKAGES = (canaries, logits, sampling_distribution, decode_vs_prefill, prompt_logprob, conditions, neighbours,
                 coverage, tokens, cache_zero, speculation, speed, speed_ab, speed_cells)

# What --allow-inconclusive takes: every kind some check's items may be inconclusive under, each once.
INCONCLUSIVE_KINDS: tuple[str, ...] = tuple(dict.fromkeys(kind for package in KIND_PACKAGES
                                                          for kind in package.INCONCLUSIVE))

# Each kind's options module (TITLE, add_options, settings_of), in the order of CHECKS (registry.py; a test keeps
# the two in step): their `--help` groups follow the core options' in this order.
OPTION_MODULES = (_canaries, _logits, _sampling_distribution, _decode_vs_prefill, _prompt_logprob, _conditions,
                  _neighbours, _coverage, _speculation, _speed, _speed_ab, _speed_cells)


def add_check_options(parser) -> None:
    """Each kind's options on its own `--help` group, `oracle-<kind>` titled `oracle: <TITLE>`."""
    for module in OPTION_MODULES:
        kind = module.__name__.split(".")[-2]
        module.add_options(parser.getgroup(f"oracle-{kind}", f"oracle: {module.TITLE}"))


def __getattr__(name: str):
    # The descriptors load on first use (registry.py), not with the options (docs/architecture.md).
    if name not in _REGISTRY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks import registry

    return getattr(registry, name)
