"""A launch command whose connections are cut: the real server behind a proxy that resets one stream (a TCP
reset) in one boot, at a request and an event the caller chose (a fault no real server shows on demand).

    python tests/helpers/reset_launch.py --state FILE --port {port} --boot 2 --request-index 3 \
        --after-events 5 -- LLAMA-SERVER-COMMAND

The wrapped command carries `{inner}` for its own port. Each launch counts itself in FILE; in boot --boot
the --request-index-th /completion request is reset after --after-events data events; every other passes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from boot_fault import start_wrapped  # noqa: E402
from proxy import FaultProxy, StreamFault  # noqa: E402

__all__ = ["main"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", type=Path, required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--boot", type=int, default=1)
    ap.add_argument("--request-index", type=int, required=True)
    ap.add_argument("--after-events", type=int, required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    boot, server, upstream = start_wrapped(a.state, a.command)
    fault = StreamFault(request_index=a.request_index, after_events=a.after_events, kind="reset") \
        if boot == a.boot else None
    with FaultProxy(upstream, stream_fault=fault, port=a.port):
        server.wait()


if __name__ == "__main__":
    main()
