"""sdk_extras: the model SDKs come without aiohttp, which is hidden from the importing thread only."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import threading

import pytest

from iac_code.providers import sdk_extras
from iac_code.providers.sdk_extras import without_unused_extras


def test_hidden_only_from_the_importing_thread_and_only_meanwhile(monkeypatch):
    monkeypatch.setattr(sdk_extras, "UNUSED_EXTRAS", frozenset({"colorsys"}))
    sys.modules.pop("colorsys", None)
    elsewhere: list[object] = []
    with without_unused_extras():
        with without_unused_extras():  # nested: still hidden once the inner one ends
            pass
        with pytest.raises(ModuleNotFoundError, match="colorsys"):
            import colorsys
        other = threading.Thread(target=lambda: elsewhere.append(importlib.import_module("colorsys")))
        other.start()
        other.join()
        assert elsewhere and elsewhere[0] is sys.modules["colorsys"]
    sys.modules.pop("colorsys")
    import colorsys

    assert colorsys.hsv_to_rgb(0, 0, 1) == (1, 1, 1)


# Prepares one provider in the background and builds the other, as the agent does, in a fresh interpreter.
_CHILD = """
import sys, threading
from iac_code.config import Settings
from iac_code.providers.clients import tls_context
from iac_code.providers.presets import build_provider, warm_up
warm_up(Settings(provider="anthropic_compatible", base_url="http://127.0.0.1:9", model="m"))
[preparing] = [thread for thread in threading.enumerate() if thread.name == "import iac_code.providers.anthropic"]
preparing.join(60)
print("anthropic" in sys.modules, tls_context.cache_info().currsize)
build_provider(Settings(provider="openai_compatible", base_url="http://127.0.0.1:9", model="m"))
import anthropic, openai
print("aiohttp" in sys.modules, *(sdk.DefaultAioHttpClient.__mro__[1].__name__ for sdk in (anthropic, openai)))
import aiohttp  # still importable afterwards
"""


@pytest.mark.skipif(importlib.util.find_spec("aiohttp") is None, reason="aiohttp is not installed (no checkov extra)")
def test_the_providers_sdks_are_prepared_and_imported_without_aiohttp():
    child = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True)
    prepared, tls_contexts, loaded, *aiohttp_client_bases = child.stdout.split()
    assert (prepared, tls_contexts) == ("True", "1")  # warm_up imported the SDK and built the TLS context
    assert loaded == "False"
    # Each SDK took its own "not installed" branch: its aiohttp client (never used here) is a plain
    # httpx2 client that raises if built, not the aiohttp transport's.
    assert aiohttp_client_bases == ["AsyncClient", "AsyncClient"]


# Builds a provider as a session's first model call does (in a worker thread), in a fresh interpreter.
_BUILT_CHILD = """
import sys, threading
from iac_code.config import Settings
from iac_code.providers.clients import tls_context
from iac_code.providers.presets import build_provider
built = threading.Thread(target=build_provider, args=[Settings(provider="openai_compatible", base_url="http://127.0.0.1:9", model="m")])
built.start()
built.join(60)
from httpcore2 import _synchronization
print(tls_context.cache_info().currsize, "trio" in sys.modules, _synchronization.trio)
import trio  # still importable afterwards
"""


@pytest.mark.skipif(importlib.util.find_spec("trio") is None, reason="trio is not installed (no test extra)")
def test_a_built_provider_has_its_tls_context_and_a_connection_pool_without_trio():
    child = subprocess.run([sys.executable, "-c", _BUILT_CHILD], capture_output=True, text=True, check=True)
    # The TLS context (and with it httpcore2) came with the build, off the event loop, and httpcore2 took
    # its "trio not installed" branch: its clients run under asyncio (anyio) only.
    assert child.stdout.split() == ["1", "False", "None"]
