import asyncio

from iac_code.providers.clients import shared_client


def test_one_client_per_key_and_event_loop():
    made = []

    def make():
        made.append(object())
        return made[-1]

    async def two_lookups():
        return shared_client("k", make), shared_client("k", make), shared_client("other", make)

    first, again, other = asyncio.run(two_lookups())
    assert first is again and other is not first
    (fresh, _, _) = asyncio.run(two_lookups())
    assert fresh is not first, "a new event loop gets its own client (connections belong to a loop)"
    assert len(made) == 4
