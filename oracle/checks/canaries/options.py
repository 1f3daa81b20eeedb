"""The canaries' options and settings, on their own `--help` group: which canary modules are collected
(`--canaries`), how the needle is planned (`--needle-lengths`, `--needle-depths`, `--oracle-context`, `--haystack`),
how many repeats, the code-result set, and `--canary-strict`.

    settings = settings_of(config.option, context)   # CanarySettings(kinds=("code", "needle"), ...)

The files an option names (--haystack, --code-set) are read as the settings are: a bad one is refused before
any request (inputs.py).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import pytest

from oracle.canary.kinds import CANARY_KINDS, DEFAULT_DEPTHS
from oracle.checks.canaries.inputs import check_canary_inputs
from oracle.validators import existing_path, int_list, positive_int

if TYPE_CHECKING:  # the descriptors load with the gate only (oracle/checks/__init__.py)
    from oracle.checks.descriptor import OptionContext

__all__ = ["TITLE", "CANARY_OPTION", "CanarySettings", "add_options", "canary_kinds_list", "settings_of"]

TITLE = "objective canaries"  # its `--help` group's: "oracle: objective canaries"


@dataclass(frozen=True)
class CanarySettings:
    """Which canaries are collected and how each is built. Each field is read from the option of its name
    (`CANARY_OPTION` names the three that differ): a new canary option is its `addoption` below and its field
    here."""

    kinds: tuple[str, ...] = CANARY_KINDS  # --canaries (none: ())
    needle_lengths: tuple[int, ...] | None = None  # None: 1K, 2K, 4K and the largest that fits the context
    needle_depths: tuple[int, ...] = DEFAULT_DEPTHS  # percent of the haystack
    context: int | None = None  # --oracle-context: the server's context, else planned from the target
    repeats: int = 5  # requests of each repeat canary
    strict: bool = False  # wrong answers fail even without a reference
    haystack: str | None = None  # None: the shipped one
    code_set: str | None = None  # None: the shipped one
    # Not an option: where the needle lengths come from when not the defaults (--needle-lengths, or a gate
    # following its reference's canary set: `follow`), and the report's note when a gate follows.
    lengths_from: str = "given with --needle-lengths"
    notes: tuple[str, ...] = ()

    @property
    def paths_read(self) -> tuple[tuple[str, str], ...]:
        """The files its options name, as (option, path): the gate keeps its report folder apart from them."""
        return tuple((flag, path) for flag, path in (("--haystack", self.haystack), ("--code-set", self.code_set))
                     if path)


CANARY_OPTION = {"kinds": "canaries", "strict": "canary_strict", "context": "oracle_context"}  # field -> option dest, where they differ
NOT_OPTIONS = ("lengths_from", "notes")  # fields settled later, against the reference (`follow`)


def canary_kinds_list(value: str) -> tuple[str, ...]:
    """--canaries: the kinds to collect, in CANARY_KINDS; `none` adds none."""
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    bad = [k for k in kinds if k not in CANARY_KINDS + ("none",)]
    if bad:
        raise pytest.UsageError(f"--canaries {value!r}: unknown canary {bad[0]!r}; known: "
                                f"{', '.join(CANARY_KINDS)}, none")
    return tuple(dict.fromkeys(k for k in kinds if k != "none"))


def add_options(group) -> None:
    group.addoption("--canaries", metavar="KIND,...", type=canary_kinds_list, default=",".join(CANARY_KINDS),
                    help=f"canary families to collect: {', '.join(CANARY_KINDS)} (crosstalk at each --ladder "
                         "level of c >= 2) or none (default: all of them)")
    group.addoption("--needle-lengths", metavar="N,...", type=int_list("--needle-lengths", low=64),
                    default=None,
                    help="needle prompt lengths in tokens, template and question included; 1K = 1024 "
                         "(default: 1K,2K,4K and the largest that fits the context)")
    group.addoption("--needle-depths", metavar="PCT,...", type=int_list("--needle-depths", low=0, high=100),
                    default=",".join(map(str, DEFAULT_DEPTHS)),
                    help="needle depths in percent of the haystack (default: 0,25,50,75,100)")
    group.addoption("--oracle-context", metavar="N", type=positive_int("--oracle-context"), default=None,
                    help="the server's context length, to drop needle lengths that do not fit (default: the "
                         "embedded default's -c and GGUF context_length, else 8192)")
    group.addoption("--repeats", metavar="N", type=positive_int("--repeats"), default=5,
                    help="requests in the sequential and in the burst repeat canary (default: 5)")
    group.addoption("--canary-strict", action="store_true", default=False,
                    help="fail wrong canary answers even without a reference (default: report them as "
                         "information)")
    group.addoption("--haystack", metavar="PATH", default=None,
                    type=existing_path("--haystack", "a text file with one haystack paragraph a line"),
                    help="haystack text file for the needle, one paragraph a line (default: the shipped one)")
    group.addoption("--code-set", metavar="PATH", default=None,
                    type=existing_path("--code-set",
                                       "a code-result set built by `python -m oracle.canary.code build`"),
                    help="code-result canary set (JSON built by `python -m oracle.canary.code build`) "
                         "(default: the shipped one)")


def settings_of(option, context: OptionContext) -> CanarySettings:
    settings = CanarySettings(**{f.name: getattr(option, CANARY_OPTION.get(f.name, f.name))
                                 for f in fields(CanarySettings) if f.name not in NOT_OPTIONS})
    if settings.strict and not settings.kinds:  # an option without effect is refused, not ignored
        raise pytest.UsageError("--canary-strict has no effect with --canaries none (it fails wrong canaries, and none "
                                "is collected): give --canaries with the kinds to run (e.g. --canaries code,needle), "
                                "or leave --canary-strict out")
    check_canary_inputs(settings)  # read now: a bad file is refused before any request
    return settings
