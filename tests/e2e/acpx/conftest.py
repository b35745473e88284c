"""Fixtures that run the real acpx client against a real `iac-code acp` and a scripted model."""

from __future__ import annotations

import pytest
from tests.e2e.acpx.client import Acpx, AcpxRunner, AcpxUnavailable, InstallFailed, install


@pytest.fixture(scope="session")
def acpx_install() -> Acpx:
    try:
        return install()
    except AcpxUnavailable as exc:
        pytest.skip(str(exc))
    except InstallFailed as exc:
        pytest.fail(f"installing acpx failed: {exc}", pytrace=False)


@pytest.fixture
def acpx(acpx_install, model, tmp_path) -> AcpxRunner:
    return AcpxRunner(acpx_install, model.url, tmp_path)
