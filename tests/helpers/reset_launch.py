"""A launch command whose connections are cut: the real server behind a proxy that resets one stream (a TCP
reset) in one boot, at a request and an event the caller chose (a fault no real server shows on demand).

    python tests/helpers/reset_launch.py --state FILE --port {port} --boot 2 --request-index 3 \
        --after-events 5 -- LLAMA-SERVER-COMMAND

The wrapped command carries `{inner}` for its own port. Each launch counts itself in FILE; in boot --boot
the --request-index-th /completion request is reset after --after-events data events; every other passes.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from proxy import FaultProxy, StreamFault  # noqa: E402

from oracle.targets.launched import free_port  # noqa: E402

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
    boot = int(a.state.read_text()) + 1 if a.state.exists() else 1
    a.state.write_text(str(boot))
    inner = free_port()
    command = " ".join(a.command).removeprefix("-- ").replace("{inner}", str(inner))
    server = subprocess.Popen(command, shell=True)
    signal.signal(signal.SIGTERM, lambda *_: (server.terminate(), sys.exit(0)))
    upstream = f"http://127.0.0.1:{inner}"
    while True:
        try:
            if httpx.get(upstream + "/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if server.poll() is not None:
            sys.exit(f"the wrapped server exited with {server.returncode}")
        time.sleep(0.2)
    fault = StreamFault(request_index=a.request_index, after_events=a.after_events, kind="reset") \
        if boot == a.boot else None
    with FaultProxy(upstream, stream_fault=fault, port=a.port):
        server.wait()


if __name__ == "__main__":
    main()
