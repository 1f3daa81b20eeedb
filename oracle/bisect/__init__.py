"""`oracle bisect`: name the launch flag, env var or program argument that changes the outputs.

    code = run_bisect(args)     # args from cli.py's `bisect` subparser; the exit code

options.py checks the input, launch.py takes the two commands apart into named changes, ddmin.py finds the
smallest set of them that reproduces B's divergence from A, probe.py starts a server and compares its tokens
with A's, session.py orchestrates and report.py writes bisect.json / .md / .html.
"""

from __future__ import annotations

import sys

from oracle.bisect.options import BisectUsage, add_parser, bisect_config
from oracle.bisect.session import BisectSession
from oracle.redaction import public_text, remember_secrets

__all__ = ["add_parser", "run_bisect"]


def run_bisect(args, out=None) -> int:
    """0 a culprit named or nothing to bisect, 1 the budget spent first, 2 bad input, an unreproducible A or an
    interrupted bisect (its report keeps what finished)."""
    remember_secrets(commands=(args.good or "", args.bad or ""))
    try:
        config = bisect_config(args)
    except BisectUsage as exc:
        print(public_text(f"oracle bisect: {exc}"), file=sys.stderr)
        return 2
    return BisectSession(config, out=out).run()
