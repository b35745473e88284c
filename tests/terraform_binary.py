"""terraform for the tests that run it: its path, or a skip when it is not installed, except under CI=true,
where a missing terraform fails the test (CI must never go green by not running them). No package on PyPI,
npm or Debian ships a recent enough terraform or OpenTofu binary (the built-in terraform_data resource
needs 1.4; the stored documents' make.py, with `removed` blocks, 1.7), so CI machines need it installed."""

from __future__ import annotations

import os
import shutil

import pytest


def require_terraform() -> str:
    path = shutil.which("terraform")
    if path is None:
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail("CI=true and terraform is not on PATH: install Terraform >= 1.4 or OpenTofu", pytrace=False)
        pytest.skip("terraform is not on PATH")
    return path
