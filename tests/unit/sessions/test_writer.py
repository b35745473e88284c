import asyncio

import pytest

from iac_code.sessions.writer import OrderedWriter


async def test_writes_run_one_at_a_time_in_submission_order():
    done: list[int] = []

    def write(i: int):
        async def run() -> None:
            await asyncio.sleep(0.01 * (3 - i))  # later writes are faster: order must still hold
            done.append(i)

        return run

    writer = OrderedWriter("s1")
    for i in range(3):
        writer.submit(write(i))
    await writer.flush()
    assert done == [0, 1, 2]


async def test_a_failed_write_surfaces_at_flush_and_later_writes_still_run():
    done: list[str] = []

    async def fail() -> None:
        raise OSError("disk full")

    async def ok() -> None:
        done.append("ok")

    writer = OrderedWriter("s1")
    writer.submit(fail)
    writer.submit(ok)
    with pytest.raises(OSError):
        await writer.flush()
    assert done == ["ok"]
    await writer.flush()  # reported once
