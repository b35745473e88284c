"""The guard's end-to-end fixtures: the stand-in CLIs, and whether commands here run in mount namespaces."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest
from tests.e2e.guard.forms import Form, stand_ins

from iac_code.guard.namespace import NamespaceSupport, probe_namespaces


@pytest.fixture(scope="session")
def bin_dir(tmp_path_factory) -> Path:
    return stand_ins(tmp_path_factory.mktemp("stand-ins"))


@functools.cache
def namespace_support() -> NamespaceSupport:
    with tempfile.TemporaryDirectory() as directory:
        return probe_namespaces(Path(directory))


@pytest.fixture(scope="session")
def namespaces_here() -> bool:
    return namespace_support().usable


def skip_unless_guardable(form: Form, namespaces: bool) -> None:
    if form.absolute and not namespaces:
        pytest.skip("an absolute path is guarded only where commands run in a mount namespace")
