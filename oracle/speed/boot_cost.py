"""What an interleaved session's server boots cost in the run plan: how many it waits on, and the plan's words for them
(priced at this run's own boot, `LaunchedServer.ready_s`). Shared by the A/B session's and the interleaved cells'
plan parts (checks/speed_ab, checks/speed_cells), which import none of each other."""

from __future__ import annotations

__all__ = ["boot_words", "server_boots"]


def server_boots(servers: str, passes: int, extra_servers: int) -> int:
    """The boots an interleaved session waits on: one-at-a-time, one per pass and the candidate's return after
    them; both-up, each server oracle starts beside the running candidate (the reference, an A/A control's), once."""
    return passes + 1 if servers == "one-at-a-time" else extra_servers


def boot_words(boots: int, boot_s: float | None) -> str:
    """'; 8 server boot(s) at 31.2 s each (this run's boot)', or why they are not priced; '' without a boot."""
    if not boots:
        return ""
    if boot_s is None:
        return f"; {boots} server boot(s), not priced (this run's server was not launched by oracle: no boot measured)"
    return f"; {boots} server boot(s) at {boot_s:.3g} s each (this run's boot)"
