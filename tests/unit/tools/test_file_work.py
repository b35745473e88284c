"""The file tools' own thread pool: bounded, separate from asyncio's default one, and never waited for."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time

import pytest

from iac_code.tools import file_work
from iac_code.tools.base import ToolError


async def test_stuck_file_work_times_out_and_leaves_the_default_executor_free() -> None:
    release = threading.Event()
    try:
        stuck = [file_work.run_file_work(release.wait, timeout=0.3) for _ in range(file_work.MAX_WORKERS + 2)]
        default_pool_answer = asyncio.to_thread(lambda: "free")
        results = await asyncio.gather(*stuck, default_pool_answer, return_exceptions=True)
        assert all(isinstance(r, ToolError) and "did not answer" in str(r) for r in results[:-1])
        assert results[-1] == "free"
        alive = [t for t in threading.enumerate() if t.name.startswith("file-tools")]
        assert 0 < len(alive) <= file_work.MAX_WORKERS and all(t.daemon for t in alive)
    finally:
        release.set()
    assert await file_work.run_file_work(lambda a, b: a + b, 2, 3) == 5


def test_errors_come_back_as_raised() -> None:
    async def failing() -> None:
        await file_work.run_file_work(lambda: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        asyncio.run(failing())


def test_exit_does_not_wait_for_a_blocked_call() -> None:
    program = (
        "import asyncio, threading\n"
        "from iac_code.tools.file_work import run_file_work\n"
        "async def main():\n"
        "    asyncio.ensure_future(run_file_work(threading.Event().wait))\n"
        "    await asyncio.sleep(0.1)\n"
        "asyncio.run(main())\n"
    )
    started = time.monotonic()
    assert subprocess.run([sys.executable, "-c", program], timeout=20).returncode == 0
    assert time.monotonic() - started < 10
