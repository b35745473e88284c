"""preload: imports that stay are not collected while they load, then frozen out of the collector's way."""

from __future__ import annotations

import gc
import importlib
import sys
import threading

import pytest

from iac_code.preload import loading_for_good, prepare_in_background


@pytest.fixture(autouse=True)
def _thaw():
    yield
    gc.unfreeze()
    gc.enable()


def test_nothing_is_collected_while_loading_and_everything_then_frozen():
    sys.modules.pop("colorsys", None)
    kept = [object() for _ in range(100)]
    with loading_for_good():
        assert not gc.isenabled()
        import colorsys  # noqa: F401
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)


def test_nothing_is_frozen_when_nothing_was_loaded():
    import colorsys

    frozen = gc.get_freeze_count()
    with loading_for_good():
        import colorsys  # noqa: F401
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_the_collector_comes_back_after_a_failed_import():
    with pytest.raises(ModuleNotFoundError), loading_for_good():
        import iac_code_no_such_module  # type: ignore[import-not-found]  # noqa: F401
    assert gc.isenabled()


def test_a_background_import_ends_loaded_and_frozen():
    sys.modules.pop("colorsys", None)
    prepare_in_background("import colorsys", lambda: importlib.import_module("colorsys"))
    for loader in [t for t in threading.enumerate() if t.name == "import colorsys"]:  # none: done already
        loader.join(10)
    assert "colorsys" in sys.modules
    assert gc.isenabled() and gc.get_freeze_count() > 0
