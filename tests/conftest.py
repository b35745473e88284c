# Fixtures every test package may use: a throwaway PostgreSQL server and its databases; and terraform on PATH
# for the tests that run it (before any test module is imported, so their skip conditions see it too).
# The machine's own cloud credential variables (a CI image's TF_CLI_CONFIG_FILE, AWS_CA_BUNDLE…) are removed
# first: whether the guard hands credentials over must not depend on the machine; the tests that mean it
# give their own (tests/e2e/guard/test_credentials.py).
import os
from collections.abc import Iterator

import pytest
from tests import evidence
from tests.terraform_binary import put_terraform_on_path, require_terraform

from iac_code.cloud_credentials import is_credential_variable

pytest_plugins = ["tests.pg.fixtures", "tests.acp_schema.plugin"]
put_terraform_on_path()
for _name in [name for name in os.environ if is_credential_variable(name)]:
    del os.environ[_name]


@pytest.fixture
def terraform() -> str:
    """terraform's path; the test is skipped without one (failed under CI=true)."""
    return require_terraform()


_group_seconds: dict[str, float] = {}


def _group_of(nodeid: str) -> str:
    """A test's group: its first two directories under tests/ (tests/e2e/web, tests/unit/iac, tests/fuzz)."""
    directories = nodeid.split("::")[0].split("/")[:-1]
    return "/".join(directories[:3])


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Set-up and tear-down count too: shared services (PostgreSQL, Chromium, nginx) start in them.
    group = _group_of(report.nodeid)
    _group_seconds[group] = _group_seconds.get(group, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The time each group of tests took, largest first: growth is seen the day it happens."""
    if not _group_seconds:
        return
    terminalreporter.section("seconds per test group")
    for group, seconds in sorted(_group_seconds.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"{seconds:8.1f}  {group}")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    evidence.forget_finished()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test's report shows the processes it drove (tests/evidence.py): no red run without its why."""
    report: pytest.TestReport = yield
    if report.failed:
        report.sections.extend(evidence.report_sections())
    return report
