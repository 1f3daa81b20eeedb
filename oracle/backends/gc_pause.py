"""The cyclic garbage collector paused while a streaming client is open.

Reading a stream allocates a few containers per token (its top-k row's ids and logprobs), and CPython runs a
collection every 700 of them; each collection walks the rows of every completion still in flight. At c64 on
vLLM's top-20 streams that was ~15% of the client's CPU (docs/performance.md), and a collection that runs while
tokens arrive stamps them late by its length. While a client is open only reference counting frees objects (it
frees every row, event and chunk the moment it is dropped); the rare cycles (an exception's traceback) wait until
the last open client closes, when the collector resumes as it was.

    pause_collector()      # in a client's __aenter__
    resume_collector()     # in its __aexit__
"""

from __future__ import annotations

import gc
import threading

__all__ = ["pause_collector", "resume_collector"]

_lock = threading.Lock()
_open = 0
_was_enabled = False


def pause_collector() -> None:
    """One more open client; the first one pauses the collector (if it ran)."""
    global _open, _was_enabled
    with _lock:
        if _open == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _open += 1


def resume_collector() -> None:
    """One client fewer; when none is left open the collector runs again if it ran before the first."""
    global _open
    with _lock:
        if _open == 0:
            return
        _open -= 1
        if _open == 0 and _was_enabled:
            gc.enable()
