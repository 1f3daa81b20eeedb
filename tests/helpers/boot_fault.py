"""A launch command whose server changes one token only after a restart (a fault no real server shows on demand).

    python tests/boot_fault.py --state FILE --port {port} --position 7 --request-index 2 -- LLAMA-SERVER-COMMAND

The wrapped command carries `{inner}` for its own port. Each launch counts itself in FILE;
from boot `--from-boot` on, the proxy on --port changes the completion token at --position
of the --request-index-th /completion request of that boot. The real server does the rest.
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
from proxy import FaultProxy, change_token  # noqa: E402

from oracle.targets.launched import free_port  # noqa: E402


def start_wrapped(state: Path, words: list[str]) -> tuple[int, subprocess.Popen, str]:
    """Count this launch in `state`, start the wrapped command on a free inner port (its `{inner}`), stop it with
    this wrapper's SIGTERM, and wait for its /health: (this boot's number, the server, its URL)."""
    boot = int(state.read_text()) + 1 if state.exists() else 1
    state.write_text(str(boot))
    inner = free_port()
    command = " ".join(words).removeprefix("-- ").replace("{inner}", str(inner))
    server = subprocess.Popen(command, shell=True)
    signal.signal(signal.SIGTERM, lambda *_: (server.terminate(), sys.exit(0)))
    upstream = f"http://127.0.0.1:{inner}"
    while True:
        try:
            if httpx.get(upstream + "/health", timeout=2).status_code == 200:
                return boot, server, upstream
        except httpx.HTTPError:
            pass
        if server.poll() is not None:
            sys.exit(f"the wrapped server exited with {server.returncode}")
        time.sleep(0.2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", type=Path, required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--position", type=int, required=True)
    ap.add_argument("--request-index", type=int, default=1)
    ap.add_argument("--from-boot", type=int, default=2)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    boot, server, upstream = start_wrapped(a.state, a.command)
    fault = change_token(request_index=a.request_index, position=a.position) if boot >= a.from_boot else None
    with FaultProxy(upstream, rewrite_chunk=fault, port=a.port):
        server.wait()


if __name__ == "__main__":
    main()
