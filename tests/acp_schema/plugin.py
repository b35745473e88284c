"""The pytest side of the check (listed in tests/conftest.py): a violation of the ACP schema fails the test during
which the message was read, whichever client read it and in whichever thread."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.acp_schema import check


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Clients check messages in their reader threads, where raising would only end the reader: what they found
    (and the test did not already fail with) fails the test here, or is added to the failure it already has."""
    try:
        result = yield
    except BaseException as failure:
        for violation in check.take_found():
            if violation is not failure:
                failure.add_note(str(violation))
        raise
    check.fail_if_found()
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Messages read while fixtures close (the last updates of a shared agent) count too."""
    result = yield
    check.fail_if_found()
    return result
