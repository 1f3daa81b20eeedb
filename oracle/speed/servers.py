"""The two sides' servers of an in-session A/B (the speed-ab item's passes, the interleaved speed cells): the
session's own target for the candidate, a LaunchedTarget of --reference-launch for the reference (and the A/A
control's second reference), booted and stopped here.

    ref = Server(REFERENCE, reference_target(plan, target, recorder, "reference-server", command), own=True)
    backend = boot(ref)                        # TargetError naming the side that did not start
    why = candidate_back(candidate, recorder, prompts, state, "speed-ab")   # the candidate up again, or why not
"""

from __future__ import annotations

from oracle.speed.interleave import CANDIDATE
from oracle.targets import TargetError
from oracle.targets.launched import LaunchedTarget

__all__ = ["Server", "boot", "candidate_back", "reference_target"]


class Server:
    """One side's server. backend: None while it is down; own: started here, stopped here."""

    def __init__(self, side: str, target, *, own: bool) -> None:
        self.side, self.target, self.own = side, target, own
        self.backend = None
        self.boots = 0  # boots started by this session

    def boot(self):
        self.target.stop()
        self.backend = self.target.up()
        self.boots += 1
        return self.backend

    def stop(self) -> None:
        self.target.stop()
        self.backend = None


def reference_target(plan, target, recorder, folder: str, command: str) -> LaunchedTarget:
    """The reference config's server (not started yet) from its launch command (--reference-launch), with the
    candidate's launch environment (an embedded candidate's holds the library path its llama-server needs)."""
    env = target.server.env if isinstance(target, LaunchedTarget) else None
    o = plan.options
    return LaunchedTarget(o.backend, command, kind="reference", worker=0,
                          log_dir=recorder.report.folder / folder, env=env, timeout_s=o.request_timeout,
                          launch_timeout_s=o.launch_timeout)


def boot(server: Server):
    """A fresh boot of the side's server, or TargetError saying which side did not start."""
    try:
        return server.boot()
    except TargetError as exc:
        what = ("the candidate did not come back" if server.side == CANDIDATE
                else f"the {server.side} server (--reference-launch) did not start")
        raise TargetError(f"{what}: {exc}") from None


def candidate_back(candidate: Server, recorder, prompts, state, item: str) -> str | None:
    """The candidate's server up again for the items after this one (one-at-a-time stopped it); why not."""
    if candidate.backend is None:
        try:
            boot(candidate)
        except TargetError as exc:
            return f"{item}: {exc}"
    if candidate.backend is not recorder.backend:
        recorder.backend = candidate.backend
        prompts.use_backend(candidate.backend)
        state.note(f"{item} (one-at-a-time) booted the candidate {candidate.boots} more time(s); the items after it "
                   "ran on its last boot")
    return None
