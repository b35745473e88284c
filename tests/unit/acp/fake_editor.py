"""A fake ACP client (the editor) answering fs/* and terminal/* requests, recording every call."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import RequestError


class FakeEditor:
    """`await editor(method, params)` as the SDK connection's send_request would.

    buffers: path → text the editor holds (unsaved edits included). exit_after: seconds before a
    terminal's command exits with `exit_code`, None to run until killed. outputs: what successive
    terminal/output calls return (the last one repeats). missing: methods answered "method not found".
    silent: methods never answered (the request waits until it is cancelled).
    """

    def __init__(
        self,
        *,
        buffers: dict[Path, str] | None = None,
        exit_after: float | None = 0.0,
        exit_code: int = 0,
        outputs: list[dict[str, Any]] | None = None,
        missing: tuple[str, ...] = (),
        failing: tuple[str, ...] = (),
        silent: tuple[str, ...] = (),
    ) -> None:
        self.buffers = {str(path): text for path, text in (buffers or {}).items()}
        self.exit_after = exit_after
        self.exit_code = exit_code
        self.outputs = list(outputs or [{"output": "", "truncated": False}])
        self.missing = missing
        self.failing = failing
        self.silent = silent
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.killed = asyncio.Event()

    @property
    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]

    async def __call__(self, method: str, params: dict[str, Any]) -> Any:
        self.calls.append((method, params))
        if method in self.missing:
            raise RequestError.method_not_found(method)
        if method in self.failing:
            raise RequestError.internal_error({"details": f"{method} broke"})
        await asyncio.sleep(0)
        if method in self.silent:
            await asyncio.get_running_loop().create_future()
        if method == "fs/read_text_file":
            if params["path"] not in self.buffers:
                raise RequestError.resource_not_found(params["path"])
            return {"content": self.buffers[params["path"]]}
        if method == "fs/write_text_file":
            self.buffers[params["path"]] = params["content"]
            return {}
        if method == "terminal/create":
            return {"terminalId": "term-1"}
        if method == "terminal/wait_for_exit":
            return await self._wait()
        if method == "terminal/output":
            return self.outputs.pop(0) if len(self.outputs) > 1 else self.outputs[0]
        if method == "terminal/kill":
            self.killed.set()
            return {}
        if method == "terminal/release":
            return {}
        raise RequestError.method_not_found(method)

    async def _wait(self) -> dict[str, Any]:
        if self.exit_after is None:
            await self.killed.wait()
            return {"signal": "SIGKILL"}
        await asyncio.sleep(self.exit_after)
        return {"exitCode": self.exit_code}
