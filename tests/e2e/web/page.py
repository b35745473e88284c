"""What a test does with the web client, by its `data-testid` hooks: open it, start a session, send a prompt,
answer a permission dialog, and wait for what the page shows (never a fixed sleep)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

TIMEOUT = 20
ARTIFACTS = Path(__file__).with_name("artifacts")  # screenshots and failure reports (ignored by git)
T = TypeVar("T")


def by_testid(name: str) -> str:
    return f'[data-testid="{name}"]'


class WebPage:
    def __init__(self, driver: WebDriver, base: str) -> None:
        self.driver = driver
        self.base = base

    # -- waiting ------------------------------------------------------------------------------------

    def until(self, condition: Callable[[], T | None], message: str = "", timeout: float = TIMEOUT) -> T:
        """The first truthy value of `condition` (elements going stale while the page changes are retried)."""

        def attempt(_: WebDriver) -> T | None:
            try:
                return condition()
            except StaleElementReferenceException:
                return None

        result: T = WebDriverWait(self.driver, timeout).until(attempt, message)
        return result

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def one(self, css: str) -> WebElement:
        return self.until(lambda: next(iter(self.all(css)), None), f"no {css}")

    def visible(self, css: str) -> WebElement:
        return self.until(lambda: next((e for e in self.all(css) if e.is_displayed()), None), f"no visible {css}")

    def gone(self, css: str) -> None:
        self.until(lambda: not any(e.is_displayed() for e in self.all(css)), f"{css} still shown")

    # -- the page -----------------------------------------------------------------------------------

    def open(self, query: str = "", fragment: str = "") -> None:
        self.driver.get(f"{self.base}/{query}{fragment}")

    def connected(self) -> str:
        """Waits for the connection; the transport it uses ("websocket" or "sse")."""
        status = self.one("#connection-status")
        self.until(lambda: status.get_attribute("data-state") == "connected", f"not connected: {status.text}")
        return status.get_attribute("data-transport") or ""

    def new_session(self, cwd: str | None = None) -> str:
        """Starts a session (in `cwd`, else the default the page offers); its id, as the URL names it."""
        self.connected()
        if cwd is not None:
            field = self.one(by_testid("cwd-input"))
            field.clear()
            field.send_keys(cwd)
        before = self.driver.current_url
        self.until(lambda: self.one(by_testid("new-session")).is_enabled(), "new-session disabled")
        self.one(by_testid("new-session")).click()
        self.until(lambda: self.driver.current_url != before and "session=" in self.driver.current_url, "no session")
        self.until(lambda: self.one(by_testid("prompt-input")).is_enabled(), "prompt-input disabled")
        return self.session_id()

    def session_id(self) -> str:
        return self.driver.current_url.split("session=")[1].split("&")[0].split("#")[0]

    def send(self, text: str) -> None:
        box, send = self.one(by_testid("prompt-input")), self.one(by_testid("send"))
        self.until(lambda: box.is_enabled() and send.is_enabled(), "a turn is running")
        box.send_keys(text)
        send.click()

    def stop_reasons(self) -> list[str]:
        return [e.get_attribute("data-reason") or "" for e in self.all(by_testid("stop-reason"))]

    def wait_turns(self, count: int) -> list[str]:
        """Waits until `count` turns have ended; their stop reasons."""
        return self.until(lambda: (r := self.stop_reasons()) and len(r) >= count and r, f"fewer than {count} turns")

    def texts(self, name: str) -> list[str]:
        return [e.text for e in self.all(by_testid(name))]

    def answer_permission(self, kind: str) -> str:
        """Waits for the permission dialog and picks the option of `kind`; the text the dialog showed."""
        shown = self.visible(by_testid("permission-dialog")).text
        self.visible(f'{by_testid("permission-option")}[data-kind="{kind}"]').click()
        return shown

    def select_option(self, name: str, value: str) -> None:
        Select(self.one(by_testid(name))).select_by_value(value)

    def screenshot_to(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / name
        self.driver.save_screenshot(str(path))
        return path

    def script(self, source: str, *args: Any) -> Any:
        return self.driver.execute_script(source, *args)

    # -- the console --------------------------------------------------------------------------------

    def console(self) -> list[str]:
        """What the page logged since the last call."""
        return [str(entry["message"]) for entry in self.driver.get_log("browser")]

    def assert_console_clean(self) -> None:
        """No refused resource (the Content-Security-Policy) and no uncaught error."""
        bad = [line for line in self.console() if "Content Security Policy" in line or "Uncaught" in line]
        assert not bad, bad
