"""The prompt box with a model that takes images: an image picked or pasted goes to the model with the text
(as the data URL the API expects) and is shown in the conversation, live and replayed; the keyboard alone
writes and sends (Shift+Enter a new line, Enter sends)."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from selenium.webdriver.common.keys import Keys
from tests.e2e.http.server_process import ServerProcess, http_server
from tests.e2e.web.page import by_testid
from tests.fakes.openai_server import ScriptedOpenAI

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
DATA_URL = f"data:image/png;base64,{PNG}"
PASTE = """
const bytes = Uint8Array.from(atob(arguments[0]), (c) => c.charCodeAt(0));
const transfer = new DataTransfer();
transfer.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
document.querySelector("#prompt-input").dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true }));
"""


@pytest.fixture(scope="module")
def live(model: ScriptedOpenAI) -> Iterator[ServerProcess]:
    with http_server(model.url, env={"IAC_CODE_IMAGES": "1"}) as server:
        yield server


def sent_to_model(model: ScriptedOpenAI) -> list:
    (request,) = model.requests
    return [m["content"] for m in request["messages"] if m["role"] == "user"][-1]


@pytest.mark.parametrize("how", ["picked", "pasted"])
def test_an_image_goes_with_the_prompt_and_is_shown_again_on_reload(page, model, tmp_path, how):
    model.add({"text": "A one-pixel image."})
    page.open()
    page.new_session()
    if how == "picked":
        image = tmp_path / "pixel.png"
        image.write_bytes(base64.b64decode(PNG))
        page.visible("#attach-label")
        page.one("#image-input").send_keys(str(image))
    else:
        page.script(PASTE, PNG)
    page.until(lambda: page.all("#attachments img"), "no thumbnail")
    page.send("What is this?")
    page.wait_turns(1)

    sent = sent_to_model(model)  # in the order the provider puts them
    assert len(sent) == 2 and {"type": "text", "text": "What is this?"} in sent
    assert {"type": "image_url", "image_url": {"url": DATA_URL}} in sent
    assert not page.all("#attachments img")  # sent, so no longer attached
    shown = f"{by_testid('user-message')} img"
    assert page.one(shown).get_attribute("src") == DATA_URL
    page.driver.refresh()
    page.connected()
    page.until(lambda: page.all(shown) and page.one(shown).get_attribute("src") == DATA_URL, "not replayed")


def test_the_keyboard_writes_lines_and_sends(page, model):
    model.add({"text": "Two lines received."})
    page.open()
    page.new_session()
    box = page.one(by_testid("prompt-input"))
    box.send_keys("first line", Keys.SHIFT, Keys.ENTER, Keys.NULL, "second line", Keys.ENTER)
    assert page.wait_turns(1) == ["end_turn"]
    assert page.texts("user-message") == ["first line\nsecond line"]
    assert box.get_attribute("value") == ""
