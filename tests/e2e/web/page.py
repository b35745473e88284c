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

    # -- what content did ----------------------------------------------------------------------------

    def unsafe_markup(self, within: WebElement | None = None) -> list[str]:
        """Elements under `within` (the whole page when None) that could run, load or restyle: a tag of
        UNSAFE_TAGS, an `on*` handler, an inline style or a `javascript:` address."""
        found: list[str] = self.script(UNSAFE_MARKUP, within, ", ".join(UNSAFE_TAGS))
        return found

    def images_loaded(self, within: WebElement) -> None:
        """Waits until every image under `within` has finished loading or failed (its handlers had their chance)."""
        done = "return [...arguments[0].querySelectorAll('img')].every((img) => img.complete)"
        self.until(lambda: self.script(done, within), "an image is still loading")

    def canaries(self) -> dict[str, Any]:
        """The `window.__canary*` values a payload would have set (empty: nothing ran)."""
        found: dict[str, Any] = self.script(
            "return Object.fromEntries(Object.keys(window).filter((k) => k.startsWith('__canary')).map((k) => [k, window[k]]))"
        )
        return found

    def inline_handler_refused(self) -> tuple[list[str], bool]:
        """The positive control of the page's policy: a live button the test gives an inline handler and clicks.
        The `securitypolicyviolation` directives it raised, and whether its handler ran."""
        directives, ran = self.driver.execute_async_script(INLINE_HANDLER_CONTROL)
        self.console()  # the refusal just provoked is the control's own, not the page's
        return list(directives), bool(ran)

    # -- the console --------------------------------------------------------------------------------

    def console(self) -> list[str]:
        """What the page logged since the last call."""
        return [str(entry["message"]) for entry in self.driver.get_log("browser")]

    def assert_console_clean(self) -> None:
        """No uncaught error and no refusal by the Content-Security-Policy, except a browser's report about inline
        markup the sanitiser then removed: Chromium versions differ in whether parsing an answer in the sanitiser's
        inert document reports its handlers, styles or <base>, so such a report is evidence, never an error, as long
        as no such markup is on the page."""
        lines = self.console()
        errors = [line for line in lines if "Uncaught" in line]
        refused = [line for line in lines if "Content Security Policy" in line]
        left_on_page = self.unsafe_markup() if refused else []
        errors += [line for line in refused if left_on_page or not any(t in line for t in INLINE_REPORTS)]
        assert not errors, (errors, left_on_page)


# What no answer may bring onto the page (the sanitiser removes them; the policy would refuse what is left).
UNSAFE_TAGS = ("script", "iframe", "object", "embed", "base", "meta", "link", "form", "style", "frame", "frameset")
# The words of Chromium's reports about inline markup (handlers, styles, a document base) it refused.
INLINE_REPORTS = ("inline event handler", "inline style", "base URI")

UNSAFE_MARKUP = """
const [within, tags] = arguments;
const root = within || document.body;
const unsafe = (element) =>
  element.matches(tags) ||
  [...element.attributes].some(
    (attribute) =>
      attribute.name.startsWith("on") ||
      attribute.name === "style" ||
      /^\\s*(javascript|vbscript):/i.test(attribute.value),
  );
return [...root.querySelectorAll("*")].filter(unsafe).map((element) => element.outerHTML.slice(0, 200));
"""

INLINE_HANDLER_CONTROL = """
const done = arguments[arguments.length - 1];
const directives = [];
const record = (event) => {
  directives.push(event.effectiveDirective);
  finish();
};
const finish = () => {
  document.removeEventListener("securitypolicyviolation", record);
  done([directives, window.__canaryControl === 1]);
};
document.addEventListener("securitypolicyviolation", record);
const button = document.createElement("button");
button.hidden = true;
button.setAttribute("onclick", "window.__canaryControl = 1");
document.body.append(button);
button.click();
button.remove();
setTimeout(finish, 5000); // no event in 5 s: the control fails with what it saw
"""
