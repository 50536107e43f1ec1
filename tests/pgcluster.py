"""A throwaway PostgreSQL cluster for the tests: initdb into a temp dir, start on a free port, stop.

Uses the server binaries of the machine (Debian: ``apt-get install postgresql``, found in
``/usr/lib/postgresql/*/bin`` or by ``pg_config --bindir``; ``AGENTRT_PG_BIN`` overrides).
The server refuses to run as root, so as root the cluster belongs to the ``postgres`` user.
``AGENTRT_TEST_PG_URL=postgresql://...`` uses an existing server instead.

Run by hand: ``python tests/pgcluster.py`` starts one, prints its URL and stops it on Enter.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator

HOW_TO_RUN = (
    "PostgreSQL tests need the server binaries: apt-get install postgresql (or set AGENTRT_PG_BIN "
    "to their directory, or AGENTRT_TEST_PG_URL=postgresql://... for a running server); CI runs them"
)


def find_bindir() -> str | None:
    candidates = [os.environ.get("AGENTRT_PG_BIN", "")]
    if shutil.which("pg_config"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True)
            candidates.append(out.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for bindir in candidates:
        if (
            bindir
            and os.path.exists(os.path.join(bindir, "initdb"))
            and os.path.exists(os.path.join(bindir, "pg_ctl"))
        ):
            return bindir
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def cluster(settings: str = "") -> Iterator[str]:
    """Yield the URL of a fresh cluster's ``postgres`` database; stop and delete it afterwards.

    ``settings``: more server options (``-c name=value ...``), e.g. the benchmarks load
    ``pg_stat_statements`` to count the statements of a durable step."""
    url = os.environ.get("AGENTRT_TEST_PG_URL")
    if url:
        yield url
        return
    bindir = find_bindir()
    if bindir is None:
        raise FileNotFoundError(HOW_TO_RUN)
    root = tempfile.mkdtemp(prefix="agentrt-pg-")
    data, sock, log = os.path.join(root, "data"), os.path.join(root, "sock"), os.path.join(root, "log")
    os.makedirs(sock)
    prefix: list[str] = []
    if os.geteuid() == 0:  # the server refuses root: run it as the postgres user
        user = pwd.getpwnam("postgres")
        for path in (root, sock):
            os.chown(path, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    started = False
    try:
        subprocess.run(
            [
                *prefix,
                f"{bindir}/initdb",
                "-D",
                data,
                "-A",
                "trust",
                "-U",
                "agentrt",
                "--no-sync",
                "-E",
                "UTF8",
            ],
            check=True,
            capture_output=True,
        )
        options = f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        options += f" {settings}" if settings else ""
        subprocess.run(
            [*prefix, f"{bindir}/pg_ctl", "-D", data, "-o", options, "-l", log, "-w", "-t", "60", "start"],
            check=True,
            capture_output=True,
        )
        started = True
        yield f"postgresql://agentrt@127.0.0.1:{port}/postgres"
    except subprocess.CalledProcessError as exc:
        tail = ""
        with contextlib.suppress(OSError), open(log) as f:
            tail = f.read()[-2000:]
        raise RuntimeError(
            f"could not start a PostgreSQL cluster with {bindir}: {exc.stderr.decode(errors='replace')}{tail}"
        ) from None
    finally:
        if started:
            subprocess.run(
                [*prefix, f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"],
                capture_output=True,
            )
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(admin_url: str, name: str) -> str:
    """Create database ``name`` (dropping an old one) and return its URL."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + "/" + name


def drop_database(admin_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def fresh_schema(database_url: str, name: str) -> str:
    """Create schema ``name`` (dropping an old one) in the database and return a URL whose
    connections use it (``search_path``): an empty place for a store, much cheaper than a database."""
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        conn.execute(f'CREATE SCHEMA "{name}"')
    return f"{database_url}?options=-csearch_path%3D{name}"


if __name__ == "__main__":
    with cluster() as url:
        print(url, flush=True)
        input("running; press Enter to stop ")
