"""Start the real `iac-code acp --transport http` process on 127.0.0.1 (ephemeral port) for tests and bench."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests import evidence

IAC_CODE = Path(sys.executable).with_name("iac-code")
_BANNER = re.compile(r"ACP over HTTP\+SSE: (http://\S+/acp)")


@dataclass(eq=False)  # compared (and watched) as itself
class ServerProcess:
    url: str  # .../acp
    process: subprocess.Popen[bytes]
    log: Path
    workspace: Path

    @property
    def base(self) -> str:
        return self.url.removesuffix("/acp")

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def evidence_title(self) -> str:
        return (
            f"iac-code acp --transport http at {self.url} (pid {self.process.pid}, exit status {self.process.poll()})"
        )

    def evidence(self) -> str:
        return "log tail:\n" + evidence.tail(self.log_text() if self.log.exists() else "(log removed)")

    def finished(self) -> bool:
        return self.process.poll() is not None


def model_env(model_url: str, config_dir: Path) -> dict[str, str]:
    return {
        "IAC_CODE_PROVIDER": "openai_compatible",
        "IAC_CODE_BASE_URL": model_url,
        "IAC_CODE_API_KEY": "test",
        "IAC_CODE_MODEL": "scripted-model",
        "IAC_CODE_CONFIG_DIR": str(config_dir),
    }


@contextlib.contextmanager
def http_server(model_url: str, *args: str, env: dict[str, str] | None = None) -> Iterator[ServerProcess]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "workspace"
        workspace.mkdir()
        log = root / "server.log"
        inherited = {k: v for k, v in os.environ.items() if k != "IACCODE_ACP_HTTP_TOKEN"}
        full_env = {**inherited, **model_env(model_url, root / "config"), **(env or {})}
        command = [str(IAC_CODE), "acp", "--transport", "http", "--port", "0", *args]
        with log.open("wb") as sink:
            process = subprocess.Popen(command, cwd=workspace, env=full_env, stdout=sink, stderr=sink)
        try:
            url = _wait_for_banner(process, log)
            server = ServerProcess(url, process, log, workspace)
            evidence.watch(server)
            yield server
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _wait_for_banner(process: subprocess.Popen[bytes], log: Path, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = _BANNER.search(log.read_text(errors="replace"))
        if match:
            return match.group(1)
        if process.poll() is not None:
            raise RuntimeError(f"server exited ({process.returncode}):\n{log.read_text(errors='replace')}")
        time.sleep(0.05)
    raise TimeoutError(f"no banner within {timeout}s:\n{log.read_text(errors='replace')}")
