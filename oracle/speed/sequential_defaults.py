"""The sequential speed test's defaults, in a module of their own: the option declarations read them in every pytest
session of oracle's environment, which must not import numpy (docs/architecture.md, "The plugin's cost")."""

from __future__ import annotations

__all__ = ["DEFAULT_ALPHA", "DEFAULT_BETA", "DEFAULT_DELTA", "DEFAULT_ROUNDS_MAX", "MIN_ROUNDS"]

DEFAULT_ROUNDS_MAX = 8
DEFAULT_DELTA = 0.03  # the indifference zone: H1 is a speed-up at least 3% above the bar
DEFAULT_ALPHA = DEFAULT_BETA = 0.05
MIN_ROUNDS = 2  # a spread needs two rounds
