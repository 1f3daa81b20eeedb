"""The gate's check kinds: one package per kind (`oracle/checks/<kind>/`), each declaring all of itself in one
`CheckDescriptor` (its options, settings, items, producers, report state and sections; check.py), and `KINDS`
(below), the one place that lists them (`CHECKS`, registry.py, their descriptors). The gate (oracle/gate/) is the
engine that reads them; it names no check.

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

from functools import cache
from importlib import import_module
from importlib.metadata import distributions
from importlib.util import find_spec
from pathlib import Path

_REGISTRY = ("CHECKS", "SECTIONS", "CheckDescriptor", "CheckItem", "CheckParts", "CheckState", "Finding",
             "OptionContext", "Producers", "STATE_TYPES", "check_named", "fresh_states", "not_run", "read_state",
             "state_part")

__all__ = sorted(["ENTRY_POINTS", "INCONCLUSIVE_KINDS", "KINDS", "OPTION_MODULES", "add_check_options", "kind_packages",
                  "inconclusive_kinds", *_REGISTRY])

# The check kinds, each a package under oracle/checks/, in the order of their option groups in `--help` (after the
# core options) and of their items within one `order`. A new kind: its package, and its name here (one line).
KINDS = ("canaries", "logits", "sampling_distribution", "decode_vs_prefill", "prompt_logprob", "conditions",
         "neighbours", "coverage", "tokens", "cache_zero", "speculation", "speed", "speed_ab", "speed_cells")
# A kind installed apart from oracle names its package in this entry point group (pyproject.toml:
# `[project.entry-points."oracle.checks"] mykind = "my_package.mykind"`): it follows KINDS, by entry point name.
ENTRY_POINTS = "oracle.checks"


@cache
def kind_packages() -> tuple[str, ...]:
    """Every check kind's package: KINDS, then each installed kind's (`ENTRY_POINTS`), the first of a name on
    sys.path. Each distribution's entry_points.txt is read as text and parsed only when it names the group:
    `importlib.metadata.entry_points(group=)` first reads every distribution's METADATA for its name, ~25 ms in a
    venv of a hundred packages, paid by every pytest session where oracle is installed (docs/architecture.md)."""
    installed: dict[str, str] = {}
    for dist in distributions():
        text = dist.read_text("entry_points.txt") or ""
        if f"[{ENTRY_POINTS}]" in text:
            for ep in dist.entry_points.select(group=ENTRY_POINTS):
                installed.setdefault(ep.name, ep.value)
    return tuple(f"oracle.checks.{k}" for k in KINDS) + tuple(installed[name] for name in sorted(installed))


def _options_module(package: str):
    """A kind's light options module (`<package>.options`: TITLE, add_options, settings_of); None without one. Its
    package is not imported for the asking (a session without --backend imports the options alone)."""
    spec = find_spec(package)
    folders = (spec.submodule_search_locations or ()) if spec is not None else ()
    has = any((Path(folder) / "options.py").is_file() for folder in folders)
    return import_module(f"{package}.options") if has else None


# Each kind's options module, in the order of CHECKS (registry.py reads the same packages): their `--help` groups
# follow the core options' in this order.
OPTION_MODULES = tuple(m for m in map(_options_module, kind_packages()) if m is not None)


@cache
def inconclusive_kinds() -> tuple[str, ...]:
    """What --allow-inconclusive takes: every kind some check's items may be inconclusive under (each package's
    `INCONCLUSIVE`), each once, in the order of the kinds."""
    return tuple(dict.fromkeys(kind for package in kind_packages()
                               for kind in getattr(import_module(package), "INCONCLUSIVE", ())))


def add_check_options(parser) -> None:
    """Each kind's options on its own `--help` group, `oracle-<kind>` titled `oracle: <TITLE>`."""
    for module in OPTION_MODULES:
        kind = module.__name__.split(".")[-2]
        module.add_options(parser.getgroup(f"oracle-{kind}", f"oracle: {module.TITLE}"))


def __getattr__(name: str):
    if name == "INCONCLUSIVE_KINDS":  # each kind's package read once asked (an installed kind's included)
        return inconclusive_kinds()
    # The descriptors load on first use (registry.py), not with the options (docs/architecture.md).
    if name not in _REGISTRY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.checks import registry

    return getattr(registry, name)
