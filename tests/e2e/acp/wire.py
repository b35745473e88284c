"""Drive a real `iac-code acp` process with raw JSON lines (a small synchronous client for tests)."""

from __future__ import annotations

import itertools
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests import evidence
from tests.acp_schema import check

Message = dict[str, Any]


def model_env(url: str, config_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IAC_CODE_")}
    env.update(
        IAC_CODE_PROVIDER="openai_compatible",
        IAC_CODE_BASE_URL=url,
        IAC_CODE_API_KEY="test",
        IAC_CODE_MODEL="scripted-model",
        IAC_CODE_CONFIG_DIR=str(config_dir),
    )
    env.update(extra)
    return env


class AgentProcess:
    """`iac-code acp` on real pipes. Every stdout line must be JSON and conform to the ACP schema (checked as it
    is read, tests/acp_schema)."""

    def __init__(
        self, env: dict[str, str], *args: str, program: list[str] | None = None, cwd: Path | None = None
    ) -> None:
        """`program`: what to run instead of `python -m iac_code.cli` (the `iac-code` command, say)."""
        self.proc = subprocess.Popen(
            [*(program or [sys.executable, "-m", "iac_code.cli"]), "acp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self.stdout_problems: list[str] = []
        self.stderr_lines: list[str] = []
        self.transcript = evidence.Transcript()
        self.conformance = check.Conformance(f"iac-code acp (pid {self.proc.pid})")
        self._inbox: queue.Queue[Message | None] = queue.Queue()
        self._ids = itertools.count(1)
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        evidence.watch(self)

    # -- what a failing test reports (tests/evidence.py) ----------------------------------------

    def evidence_title(self) -> str:
        return f"iac-code acp (pid {self.proc.pid}, exit status {self.proc.poll()})"

    def evidence(self) -> str:
        stderr = evidence.tail("".join(self.stderr_lines))
        return f"last protocol messages:\n{self.transcript.text()}\nstderr tail:\n{stderr}"

    def finished(self) -> bool:
        return self.proc.poll() is not None

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                self.transcript.received(line)
                self.stdout_problems.append(line[:200].decode(errors="replace"))
                continue
            self.transcript.received(message)
            self.conformance.received(message)
            self._inbox.put(message)
        self._inbox.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode(errors="replace"))

    # -- writing -----------------------------------------------------------------------------

    def send_line(self, line: str | bytes) -> None:
        assert self.proc.stdin is not None
        self.transcript.sent(line)
        self.conformance.sent(line)
        self.proc.stdin.write(line if isinstance(line, bytes) else line.encode())
        self.proc.stdin.write(b"\n")
        self.proc.stdin.flush()

    def send(self, message: Message) -> None:
        self.send_line(json.dumps(message))

    def start_request(self, method: str, params: Any = None) -> int:
        request_id = next(self._ids)
        message: Message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def answer(self, request: Message, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    # -- reading -----------------------------------------------------------------------------

    def next(self, timeout: float = 15) -> Message:
        message = self._inbox.get(timeout=timeout)
        check.raise_found()
        assert message is not None, f"agent exited; stderr:\n{''.join(self.stderr_lines)}"
        return message

    def until(self, predicate: Callable[[Message], bool], timeout: float = 15) -> tuple[Message, list[Message]]:
        """Read until a message matches; returns it and everything read before it."""
        seen: list[Message] = []
        while True:
            message = self.next(timeout)
            if predicate(message):
                return message, seen
            seen.append(message)

    def response(self, request_id: int, timeout: float = 15) -> tuple[Message, list[Message]]:
        return self.until(lambda m: m.get("id") == request_id and "method" not in m, timeout)

    def call(self, method: str, params: Any = None) -> Message:
        """Send a request; return its whole response (result or error)."""
        response, _ = self.response(self.start_request(method, params))
        return response

    def result(self, method: str, params: Any = None) -> Any:
        response = self.call(method, params)
        assert "result" in response, response
        return response["result"]

    # -- conveniences ------------------------------------------------------------------------

    def initialize(self) -> Any:
        return self.result("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    def new_session(self, cwd: Path) -> str:
        session_id = self.result("session/new", {"cwd": str(cwd), "mcpServers": []})["sessionId"]
        self.until(lambda m: _update_kind(m) == "available_commands_update")
        return session_id

    def prompt(
        self, session_id: str, text: str | list[Message], on_permission: Callable[[Message], Any] | None = None
    ) -> tuple[Message, list[Message]]:
        """Run one prompt; answer permission requests with `on_permission`; return (response, updates)."""
        blocks = [{"type": "text", "text": text}] if isinstance(text, str) else text
        request_id = self.start_request("session/prompt", {"sessionId": session_id, "prompt": blocks})
        seen: list[Message] = []
        while True:
            message = self.next()
            if message.get("method") == "session/request_permission":
                assert on_permission is not None, f"unexpected permission request {message}"
                self.answer(message, on_permission(message))
                seen.append(message)
            elif message.get("id") == request_id and "method" not in message:
                return message, seen
            else:
                seen.append(message)

    def close(self, timeout: float = 10) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def _update_kind(message: Message) -> str | None:
    if message.get("method") != "session/update":
        return None
    return message["params"]["update"]["sessionUpdate"]


def updates(messages: list[Message], kind: str | None = None) -> list[Message]:
    """The `update` objects among messages, optionally of one kind."""
    found = [m["params"]["update"] for m in messages if m.get("method") == "session/update"]
    return [u for u in found if kind is None or u["sessionUpdate"] == kind]


def answer_text(messages: list[Message]) -> str:
    return "".join(u["content"]["text"] for u in updates(messages, "agent_message_chunk"))


def select(option_id: str) -> Callable[[Message], Any]:
    return lambda request: {"outcome": {"outcome": "selected", "optionId": option_id}}


class Agents:
    """Initialized agents started on one config directory; `close_all` checks that each exited
    cleanly (or was killed on purpose) and wrote nothing but JSON on stdout."""

    def __init__(self, model_url: str, config_dir: Path) -> None:
        self._model_url = model_url
        self._config_dir = config_dir
        self._started: list[AgentProcess] = []

    def start(self, **extra_env: str) -> AgentProcess:
        agent = AgentProcess(model_env(self._model_url, self._config_dir, **extra_env))
        self._started.append(agent)
        agent.initialize()
        return agent

    def close_all(self, *, killed_ok: bool = False) -> None:
        allowed = (0, -signal.SIGKILL) if killed_ok else (0,)
        for agent in self._started:
            code = agent.close()
            assert code in allowed, "".join(agent.stderr_lines)
            assert not agent.stdout_problems, f"non-JSON on stdout: {agent.stdout_problems}"
