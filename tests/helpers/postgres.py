"""A real PostgreSQL server for the ledger tests: Debian's package (`apt-get install -y postgresql`), initdb and
pg_ctl in a temp folder on a free loopback port, password authentication on (scram-sha-256), so a URL carries a
real password. As root (initdb refuses root) the cluster belongs to the package's `postgres` user.

    with postgresql_server() as server:
        url = server.database("t1")           # postgresql://oracle:<password>@127.0.0.1:<port>/t1, created empty

A missing install fails with the install command, never skips.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

INSTALL = "apt-get install -y postgresql"
USER = "oracle"


def _bin_dir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if not found:
        raise AssertionError(f"PostgreSQL's initdb is not installed; install it with `{INSTALL}`")
    return found[-1].parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PostgresServer:
    bin: Path
    data: Path
    port: int
    password: str
    as_user: list[str]

    def url(self, database: str = "postgres", *, password: str | None = None) -> str:
        return f"postgresql://{USER}:{password or self.password}@127.0.0.1:{self.port}/{database}"

    def database(self, name: str) -> str:
        """A new empty database on this server, its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def ctl(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*self.as_user, str(self.bin / "pg_ctl"), "-D", str(self.data), *args],
                              capture_output=True, text=True, timeout=60)


@contextmanager
def postgresql_server() -> Iterator[PostgresServer]:
    """Started in a folder of its own under the system's temp dir (pytest's own is closed to other users)."""
    bin_dir = _bin_dir()
    folder = Path(tempfile.mkdtemp(prefix="oracle-postgresql-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    password = "pw-" + secrets.token_hex(8)
    pwfile = folder / "pwfile"
    pwfile.write_text(password + "\n")
    if as_user:
        shutil.chown(pwfile, "postgres")
    data = folder / "data"
    init = subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={pwfile}",
                           "--auth=scram-sha-256", "-E", "UTF8", "--no-sync"], capture_output=True, text=True,
                          timeout=120)
    assert init.returncode == 0, init.stdout[-2000:] + init.stderr[-2000:]
    server = PostgresServer(bin_dir, data, free_port(), password, as_user)
    options = f"-p {server.port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    started = server.ctl("-w", "-l", str(folder / "server.log"), "-o", options, "start")
    assert started.returncode == 0, started.stdout + started.stderr + _log(folder)
    try:
        yield server
    finally:
        server.ctl("-w", "-m", "fast", "stop")
        shutil.rmtree(folder, ignore_errors=True)


def _log(folder: Path) -> str:
    try:
        return (folder / "server.log").read_text()[-2000:]
    except OSError:
        return ""
