# Fixtures every test package may use: a throwaway PostgreSQL server and its databases; and terraform on PATH
# for the tests that run it (before any test module is imported, so their skip conditions see it too).
import pytest
from tests.terraform_binary import put_terraform_on_path, require_terraform

pytest_plugins = ["tests.pg.fixtures"]
put_terraform_on_path()


@pytest.fixture
def terraform() -> str:
    """terraform's path; the test is skipped without one (failed under CI=true)."""
    return require_terraform()
