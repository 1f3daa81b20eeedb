"""The servers of the interleaved speed cells (--speed-cells with --reference-launch): the candidate as the session
holds it and the reference config launched here, handed to speed/cells_ab.py pass by pass.

    sides = CellSides(plan, recorder, prompts, target)
    try: block = measure_cells_interleaved(sides, ...)
    finally: sides.close()                  # the reference stopped
    why = sides.candidate_back(state)   # one-at-a-time: the candidate booted again for the items after

one-at-a-time: each pass on a fresh boot of its side, the other side stopped (as the speed-ab item's passes);
both-up: the reference booted at its first pass and kept up beside the candidate.
"""

from __future__ import annotations

from oracle.speed.servers import Server, boot, candidate_back, reference_target
from oracle.speed.interleave import CANDIDATE, REFERENCE

__all__ = ["CellSides"]


class CellSides:
    def __init__(self, plan, recorder, prompts, target) -> None:
        self.recorder, self.prompts = recorder, prompts
        ab = plan.options.check("speed_ab")  # the A/B's settings: how the sides' servers run, --reference-launch
        self.mode = ab.servers
        self.candidate = recorder.backend
        mine = Server(CANDIDATE, target, own=False)
        mine.backend = recorder.backend
        self.servers = {CANDIDATE: mine,
                        REFERENCE: Server(REFERENCE, reference_target(plan, target, recorder, "cells-reference-server",
                                                                     ab.command),
                                          own=True)}

    def open(self, side: str):
        """(backend, boot) for the side's next pass; boot None when the server is not booted per pass."""
        server = self.servers[side]
        if self.mode == "both-up":
            if server.backend is None:
                boot(server)
            return server.backend, None
        for other in self.servers.values():
            if other is not server:
                other.stop()
        boot(server)
        return server.backend, server.boots

    def tokenizer(self, backend):
        """The run's local tokenizer (a GGUF's, --tokenizer), else the side's own server's endpoint: in
        one-at-a-time the candidate is down while the reference runs."""
        local = self.prompts.tokenizer
        return local.encode if local else backend.tokenize

    def close(self) -> None:
        for server in self.servers.values():
            if server.own:
                server.stop()

    def candidate_back(self, state) -> str | None:
        return candidate_back(self.servers[CANDIDATE], self.recorder, self.prompts, state, "speed-cells")
