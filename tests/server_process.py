"""One minidoris server running as a child process, for tests.

`ServerProcess` starts `python -m server serve --host H --port P --data-dir D` (or the command in
the environment variable MINIDORIS_SERVER_CMD, split like a shell would, followed by the same
arguments), waits until the port accepts connections, and stops it with SIGTERM (then SIGKILL after
a grace period). `kill9()` ends it without warning, for crash tests; `restart()` stops and starts it
again on the same port and data dir. Its stdout and stderr go to a log file; every start appends a
marker line, and `log_tail()` returns the last lines for failure messages.

The child asks the kernel to kill it if the test process dies (Linux PR_SET_PDEATHSIG), so an
aborted test run leaves no server behind.
"""

from __future__ import annotations

import ctypes
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pymysql

REPO_ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT = 20.0  # seconds until the port must accept connections
STOP_TIMEOUT = 15.0  # seconds between SIGTERM and SIGKILL
CONNECT_TIMEOUT = 10
READ_TIMEOUT = 120  # a statement that takes longer is treated as hung


class ServerStartError(RuntimeError):
    """The server exited or never accepted connections; the message carries its log tail."""


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago (the usual ephemeral-port race applies)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def server_command() -> list[str]:
    """The command that starts a server, without the `serve ...` arguments."""
    custom = os.environ.get("MINIDORIS_SERVER_CMD")
    if custom:
        return shlex.split(custom)
    return [sys.executable, "-m", "server"]


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def unique_name(prefix: str) -> str:
    """A database name no other test uses."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def port_accepts(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class ServerProcess:
    """A private minidoris server: start(), stop(), kill9(), restart(), connect()."""

    def __init__(
        self,
        data_dir: Path | str,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        log_path: Path | str | None = None,
        extra_args: tuple[str, ...] = (),
    ):
        self.host = host
        self.port = port or free_port(host)
        self.http_port = free_port(host)  # stream load; never the shared default 8030
        self.data_dir = Path(data_dir)
        self.log_path = Path(log_path) if log_path else self.data_dir.parent / f"{self.data_dir.name}.log"
        ALL_LOGS.append(self.log_path)
        self.extra_args = tuple(extra_args)
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.graceful = True  # did the last stop() need only SIGTERM?

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def command(self) -> list[str]:
        return server_command() + [
            "serve",
            "--host", self.host,
            "--port", str(self.port),
            "--http-port", str(self.http_port),
            "--data-dir", str(self.data_dir),
            *self.extra_args,
        ]

    def start(self, timeout: float = STARTUP_TIMEOUT) -> "ServerProcess":
        """Start the server and wait until its port accepts connections."""
        if self.running:
            raise RuntimeError("server already running")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        cmd = self.command()
        with open(self.log_path, "ab") as log:
            log.write(f"=== start #{self.starts}: {shlex.join(cmd)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                cmd,
                cwd=REPO_ROOT,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
        deadline = time.monotonic() + timeout
        last_error = "none yet"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.proc = None
                raise ServerStartError(
                    f"minidoris exited with code {code} during start-up "
                    f"({shlex.join(cmd)}).\n--- last lines of {self.log_path} ---\n{self.log_tail()}"
                )
            # Ready means a full handshake works; closing with COM_QUIT leaves no "connection
            # closed during handshake" noise in the server log (a bare TCP probe would).
            try:
                self.connect(connect_timeout=2, read_timeout=5).close()
                return self
            except pymysql.err.MySQLError as e:
                if e.args and e.args[0] == 1045:  # root has a password: the server is up
                    return self
                last_error = f"{type(e).__name__}: {e}"
            time.sleep(0.05)
        self._signal_group(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.proc = None
        raise ServerStartError(
            f"minidoris did not accept connections on {self.host}:{self.port} within {timeout:.0f} s "
            f"({shlex.join(cmd)}); last attempt: {last_error}.\n--- last lines of {self.log_path} ---\n{self.log_tail()}"
        )

    def stop(self, timeout: float = STOP_TIMEOUT) -> int | None:
        """SIGTERM, wait up to `timeout`, then SIGKILL. Returns the exit code (None if not running).

        `self.graceful` tells afterwards whether SIGTERM alone was enough.
        """
        self.graceful = True
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.graceful = False
                self._signal_group(signal.SIGKILL)
                self.proc.wait(timeout=10)
        code = self.proc.returncode
        self._signal_group(signal.SIGKILL)  # anything the server forked and left behind
        self.proc = None
        return code

    def kill9(self) -> None:
        """SIGKILL the server (and anything in its process group) without warning."""
        if self.proc is None:
            return
        self._signal_group(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.proc = None

    def restart(self, timeout: float = STARTUP_TIMEOUT) -> "ServerProcess":
        self.stop()
        return self.start(timeout=timeout)

    def _signal_group(self, sig: int) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, sig)  # the group we created with start_new_session
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self) -> "ServerProcess":
        return self.start() if not self.running else self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- clients ---------------------------------------------------------------------------

    def connect(self, db: str | None = None, **kwargs) -> pymysql.connections.Connection:
        """A PyMySQL connection as root, autocommit, utf8mb4."""
        return connect(self.host, self.port, db, **kwargs)

    def tracebacks(self) -> list[str]:
        return tracebacks_in(self.log_path)

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return "(no log file)"
        return "\n".join(text.splitlines()[-lines:])

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"ServerProcess({self.host}:{self.port}, data_dir={self.data_dir}, {state})"


ALL_LOGS: list[Path] = []  # every ServerProcess's log, scanned when the test session ends


def tracebacks_in(path: Path) -> list[str]:
    """The Python tracebacks a server log holds (each with the log line before it): an
    internal error the server logged instead of a Doris-style error."""
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return []
    found = []
    for i, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last):"):
            end = i + 1
            while end < len(lines) and (lines[end].startswith(" ") or not lines[end].strip()):
                end += 1
            found.append("\n".join(lines[max(i - 1, 0):end + 1]))
    return found


class ExternalServer:
    """A server someone else started (MINIDORIS_TEST_SERVER=host:port): connect only."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.http_port = int(os.environ.get("MINIDORIS_TEST_HTTP_PORT", "8030"))
        self.data_dir = None
        self.log_path = None

    def connect(self, db: str | None = None, **kwargs) -> pymysql.connections.Connection:
        return connect(self.host, self.port, db, **kwargs)

    def log_tail(self, lines: int = 60) -> str:
        return "(external server: no log)"


def connect(host: str, port: int, db: str | None = None, **kwargs) -> pymysql.connections.Connection:
    params = dict(
        host=host,
        port=port,
        user="root",
        password="",
        database=db,
        autocommit=True,
        charset="utf8mb4",
        connect_timeout=CONNECT_TIMEOUT,
        read_timeout=READ_TIMEOUT,
        write_timeout=READ_TIMEOUT,
    )
    params.update(kwargs)
    return pymysql.connect(**params)
