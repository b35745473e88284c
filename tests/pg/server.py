"""A throwaway PostgreSQL server for the tests: its own data directory, a free 127.0.0.1 port, gone at the end.

PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user (created by the
Debian package) or `nobody`, in a temporary directory handed to that user. As anyone else it runs as
the current user. The binaries come from PATH or Debian's /usr/lib/postgresql/<version>/bin.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
from psycopg import sql

# Power loss is not what the tests simulate: skipping fsync makes the throwaway server fast. Commits still
# reach the kernel before they return (synchronous_commit stays on), so a kill -9 of the server loses nothing.
_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "full_page_writes": "off",
    "max_connections": "200",
    "shared_buffers": "32MB",
    "log_min_messages": "warning",
}


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def find_binaries() -> Path:
    """The directory holding initdb and postgres: PATH first, then the newest Debian install."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("postgres"):
        return Path(on_path).resolve().parent
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if debian:
        return Path(debian[-1]).parent
    raise PostgresUnavailable(
        "PostgreSQL server binaries (initdb, postgres) not found on PATH nor in /usr/lib/postgresql/*/bin: "
        "`.ci/run` installs them (apt-get install postgresql); locally, install the same package"
    )


def _server_user() -> str | None:
    """Whom to run the server as: None for the current user, unless that is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise PostgresUnavailable("running as root, and neither a `postgres` nor a `nobody` user exists to run PostgreSQL")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """One server; `url` reaches its `postgres` database as the superuser `postgres` (trust auth, loopback).
    `durable` keeps PostgreSQL's fsync on, for benchmarks that compare with the file store's fdatasync."""

    def __init__(self, *, durable: bool = False) -> None:
        self.settings = {**_SETTINGS, "fsync": "on", "full_page_writes": "on"} if durable else _SETTINGS
        self.bin = find_binaries()
        self.user = _server_user()
        # Another user must reach the directory: under /tmp, whatever TMPDIR says (it may sit in a private home).
        self.dir = Path(tempfile.mkdtemp(prefix="iac-code-pg-", dir="/tmp" if self.user else None))
        self.data = self.dir / "data"
        self.socket_dir = self.dir / "sock"
        self.log = self.dir / "server.log"
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self.socket_dir.mkdir()
        if self.user:
            user = pwd.getpwnam(self.user)
            for path in (self.dir, self.socket_dir):
                os.chown(path, user.pw_uid, user.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")

    @property
    def url(self) -> str:
        return self.database_url("postgres")

    def database_url(self, name: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def start(self, timeout: float = 30) -> None:
        """Start (or restart after `stop`/`kill`) on a new free port unless it had one already."""
        self.port = self.port or _free_port()
        options = [f"-c{key}={value}" for key, value in self.settings.items()]
        command = [str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port), "-k", str(self.socket_dir)]
        with open(self.log, "ab") as log:
            self._process = subprocess.Popen(command + options, stdout=log, stderr=log, user=self.user)
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"PostgreSQL exited at start-up:\n{self.log.read_text(errors='replace')[-3000:]}")
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        """A fast shutdown: clients are disconnected, the data stays for a restart."""
        self._signal(signal.SIGINT)

    def kill(self) -> None:
        """As if the machine died: the next start runs crash recovery."""
        self._signal(signal.SIGKILL)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def create_database(self, prefix: str = "test") -> str:
        """A new empty database; returns its URL."""
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.database_url(name)

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def _signal(self, number: int) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        self._process.send_signal(number)
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run([str(self.bin / program), *args], capture_output=True, user=self.user, cwd=self.dir)
        if done.returncode:
            raise RuntimeError(f"{program} failed:\n{done.stdout.decode()}{done.stderr.decode()}")


def truncate_all(url: str) -> None:
    """Empty every table of the public schema except the migration bookkeeping, so a test starts from zero."""
    with psycopg.connect(url, autocommit=True) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'iac_schema_migrations'"
            )
        ]
        if tables:
            names = sql.SQL(", ").join(sql.Identifier(name) for name in tables)
            conn.execute(sql.SQL("TRUNCATE {} RESTART IDENTITY CASCADE").format(names))
