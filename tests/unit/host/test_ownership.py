"""Which stored sessions a principal may use, including the ones whose owner cannot be read."""

from __future__ import annotations

from pathlib import Path

from iac_code.host.ownership import may_delete, visible
from iac_code.principals import LOCAL, Principal
from iac_code.sessions.sqlite import open_sqlite_store
from iac_code.sessions.store import SessionRecord

ALICE, BOB, ROOT = Principal("alice"), Principal("bob"), Principal("root", admin=True)


def test_the_owner_and_admins_see_a_session_and_nobody_but_admins_an_unowned_one() -> None:
    mine, unowned = SessionRecord("s1", "/w", owner="alice"), SessionRecord("s2", "/w")
    assert visible(ALICE, mine) and visible(ROOT, mine) and visible(LOCAL, mine) and not visible(BOB, mine)
    assert visible(ROOT, unowned) and not visible(ALICE, unowned)


async def test_delete_of_a_damaged_session_is_for_admins_and_of_an_unknown_one_answers_as_before(
    tmp_path: Path,
) -> None:
    store = open_sqlite_store(tmp_path / "iac-code.db", durable=False)
    try:
        await store.create(SessionRecord("s1", "/w", owner="alice"))
        damage = "UPDATE iac_sessions SET owner = '5' WHERE session_id = 's1'"  # 5: not a string
        store.submit(lambda: store.inner.conn.execute(damage)).result()  # in the store's own thread
        assert not await may_delete(store, ALICE, "s1") and await may_delete(store, ROOT, "s1")
        assert await may_delete(store, BOB, "sess_unknown")
    finally:
        await store.close()
