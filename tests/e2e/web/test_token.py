"""A server started with IACCODE_ACP_HTTP_TOKEN: the page loads without it, asks for it once (or takes it from
`#token=`, which then leaves the address bar), keeps it in the tab, and works; a wrong one is asked again."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.e2e.http.server_process import ServerProcess, http_server
from tests.e2e.web.page import WebPage, by_testid
from tests.fakes.openai_server import ScriptedOpenAI

TOKEN = "web+test/token=1"  # characters a URL or a subprotocol would mangle if taken as they are


@pytest.fixture(scope="module")
def live(model: ScriptedOpenAI) -> Iterator[ServerProcess]:
    with http_server(model.url, env={"IACCODE_ACP_HTTP_TOKEN": TOKEN}) as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_tab(page: WebPage) -> None:
    """Each test starts with a tab that knows no token."""
    page.open()
    page.script("sessionStorage.clear()")


def give_token(page: WebPage, token: str) -> None:
    field = page.visible(by_testid("token-input"))
    field.clear()
    field.send_keys(token)
    page.one(by_testid("token-submit")).click()


def test_the_page_asks_for_the_token_then_works(page, model):
    page.open()
    page.visible(by_testid("token-input"))
    assert page.one("#connection-status").get_attribute("data-state") == "unauthorized"
    give_token(page, "wrong")
    page.until(lambda: "refused" in page.one("#token-reason").text, "a wrong token was not asked again")
    give_token(page, TOKEN)
    page.connected()
    model.add({"text": "authorised"})
    page.new_session()
    page.send("hi")
    assert page.wait_turns(1) == ["end_turn"]

    page.driver.refresh()  # kept for the tab: not asked again
    page.connected()
    assert not page.one("#token-dialog").is_displayed()
    assert not [line for line in page.console() if "token" in line.lower() and "401" not in line]


def test_a_token_in_the_fragment_is_used_and_leaves_the_address_bar(page, live):
    page.open("?transport=sse", f"#token={TOKEN}&keep=1")  # as typed: "+" is a plus, "/" and "=" are kept
    page.connected()
    assert page.driver.current_url.endswith("/?transport=sse#keep=1")
    assert not page.one("#token-dialog").is_displayed()
    assert page.script("return sessionStorage.length") == 1
    assert TOKEN not in live.log_text()
