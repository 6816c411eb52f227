"""A throw-away PostgreSQL server as a test instrument: its own data folder, a free loopback port.

The binaries are the system's (Debian's `postgresql` package, which CI installs as root in
.ci/run; its binaries live in /usr/lib/postgresql/<major>/bin, off the PATH). initdb refuses to
run as root, so as root the server runs as the unprivileged `nobody`, its folder owned by it.
`pg_ctl start -w` returns once the server accepts connections (it polls; nothing sleeps a fixed
time). `SKIP_REASON` says why a test cannot have a server (no binaries, no psycopg), else None.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.reference import managed_server

PASSWORD = "pg-secret-canary"  # trust authentication ignores it; a test checks it is written nowhere


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _skip_reason() -> str | None:
    if importlib.util.find_spec("psycopg") is None:
        return "psycopg is not installed"
    missing = [name for name in ("initdb", "pg_ctl", "postgres") if _binary(name) is None]
    if missing:
        return f"no PostgreSQL server binaries ({', '.join(missing)}): install Debian's postgresql package"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: initdb refuses root"
    return None


SKIP_REASON = _skip_reason()


def _free_port() -> int:
    # the servers' own free_port: under xdist, tests/conftest.py narrows it to this worker's ports
    return managed_server.free_port("127.0.0.1")


def _run(command: list[str]) -> None:
    as_user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
    done = subprocess.run(as_user + command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stdout}{done.stderr}")


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server; yields its DSN (user postgres, database postgres) and removes it afterwards."""
    # as root, in /tmp itself: nobody must reach the folder, and $TMPDIR may be private to root
    folder = Path(tempfile.mkdtemp(prefix="loadproof-pg-", dir="/tmp" if os.geteuid() == 0 else None))
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
    data, port = folder / "data", _free_port()
    pg_ctl = str(_binary("pg_ctl"))
    try:
        _run([str(_binary("initdb")), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        _run([pg_ctl, "-D", str(data), "-o", options, "-l", str(folder / "server.log"), "-w", "-t", "60", "start"])
        try:
            yield f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/postgres"
        finally:
            _run([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
