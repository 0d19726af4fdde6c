"""Starts a real powercontext server for the tests: the binary (``$POWERCONTEXT_BIN``, or built here with
``go build``) in single_node mode on an embedded SQLite database in a temporary directory, on a free loopback port,
with an auth token. Nothing is mocked."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import List, Optional

REPO_ROOT = Path(__file__).resolve().parents[3]
_built: Optional[str] = None


def binary() -> str:
    """The server binary: $POWERCONTEXT_BIN, or ``go build`` of ./cmd/powercontext once per process."""
    global _built
    env_bin = os.environ.get("POWERCONTEXT_BIN")
    if env_bin:
        return env_bin
    if _built is None:
        out = Path(tempfile.mkdtemp(prefix="pc-bin-")) / "powercontext"
        subprocess.run(["go", "build", "-o", str(out), "./cmd/powercontext"], cwd=REPO_ROOT, check=True)
        _built = str(out)
    return _built


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One server process. ``url`` and ``token`` are set once ``start`` returns."""

    def __init__(self, extra_args: Optional[List[str]] = None) -> None:
        self.extra_args = list(extra_args or [])
        self.dir = tempfile.mkdtemp(prefix="pc-py-test-")
        self.token = secrets.token_urlsafe(24)
        self.url = ""
        self.proc: Optional[subprocess.Popen] = None
        self.log_path = os.path.join(self.dir, "server.log")

    def start(self, timeout: float = 60.0) -> "Server":
        env = {k: v for k, v in os.environ.items() if not k.startswith("POWERCONTEXT_")}
        for attempt in range(3):  # a port picked free can be taken before the server binds it
            port = _free_port()
            self.url = f"http://127.0.0.1:{port}"
            args = [binary(), "server", "run", "--database-url", f"sqlite://{self.dir}/pc.db",
                    "--listen", f"127.0.0.1:{port}", "--auth-token", self.token, *self.extra_args]
            log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
            log.close()
            if self._wait_ready(timeout):
                return self
            if self.proc.poll() is None:
                break
        self.stop()
        raise RuntimeError("powercontext did not become ready; server log:\n" + self.log_tail())

    def _wait_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.url + "/health/ready", timeout=2) as r:
                    if r.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        return False

    def log_tail(self, n: int = 40) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
