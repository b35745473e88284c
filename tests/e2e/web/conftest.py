"""The web client in a real browser: Debian's Chromium driven by Selenium, against the real server and the
scripted model.

`start_browser()` is the one way to start the browser (bench/web.py uses it too). Selenium is given the
driver's path, so Selenium Manager never runs (nothing is downloaded). Without Chromium the tests skip,
except under CI=true, where they fail. A failing test leaves a screenshot and the browser's console in
`artifacts/` (ignored by git).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver
from tests.e2e.http.server_process import ServerProcess, http_server
from tests.e2e.web.page import ARTIFACTS, WebPage
from tests.fakes.openai_server import ScriptedOpenAI

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
BROWSER_ARGUMENTS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def start_browser(user_data_dir: Path, width: int = 1280, height: int = 900) -> WebDriver:
    """Headless Chromium with its own profile in `user_data_dir`; the caller quits it."""
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in (*BROWSER_ARGUMENTS, f"--user-data-dir={user_data_dir}", f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the console, for reports and checks
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def require_browser() -> None:
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if not missing:
        return
    reason = f"{' and '.join(missing)} missing: install Debian's chromium and chromium-driver"
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    require_browser()
    with tempfile.TemporaryDirectory(prefix="iac-code-chromium-") as profile:
        driver = start_browser(Path(profile))
        try:
            yield driver
        finally:
            driver.quit()


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI(default={"text": "ok"}) as server:
        yield server


@pytest.fixture(scope="module")
def live(model: ScriptedOpenAI) -> Iterator[ServerProcess]:
    with http_server(model.url) as server:
        yield server


@pytest.fixture
def page(browser: WebDriver, live: ServerProcess) -> Iterator[WebPage]:
    """The client of the module's server, in the module's browser; the console is checked after each test."""
    web = WebPage(browser, live.base)
    web.console()  # forget what earlier tests logged
    yield web
    web.assert_console_clean()


def keep_evidence(browser: WebDriver, live: ServerProcess | None, name: str) -> list[Path]:
    """The page as it was, what the browser logged and the server's log, in artifacts/<test>.*"""
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot, console, server_log = (
        ARTIFACTS / f"{name}{suffix}" for suffix in (".png", ".console.txt", ".server.log")
    )
    browser.save_screenshot(str(screenshot))
    lines = [f"{entry['level']} {entry['message']}" for entry in browser.get_log("browser")]
    console.write_text("\n".join(lines) + "\n")
    if live is None:
        return [screenshot, console]
    server_log.write_text(live.log_text())
    return [screenshot, console, server_log]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test keeps the page's evidence, and its report says where."""
    report: pytest.TestReport = yield
    browser = getattr(item, "funcargs", {}).get("browser")
    if report.failed and browser is not None:
        try:
            kept = keep_evidence(browser, item.funcargs.get("live"), item.name)
        except Exception as exc:  # a dead browser must not hide the failure itself
            report.sections.append(("web evidence", f"not kept: {exc!r}"))
        else:
            report.sections.append(("web evidence", "\n".join(str(path.resolve()) for path in kept)))
    return report
