from collections.abc import AsyncIterator

import pytest

from iac_code.database.pool import Pool, open_pool


@pytest.fixture
async def pool(pg_url: str) -> AsyncIterator[Pool]:
    pool = await open_pool(pg_url, max_size=6)
    yield pool
    await pool.close()
