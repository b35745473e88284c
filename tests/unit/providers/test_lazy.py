import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from iac_code.config import ConfigError, Settings
from iac_code.messages import user
from iac_code.providers.base import ProviderError, TextDelta
from iac_code.providers.lazy import LazyProvider


def _scripted(tmp_path: Path, replies: list) -> Settings:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": replies}))
    return Settings(config_dir=tmp_path, provider="scripted", script=str(script))


async def _text(provider: LazyProvider) -> str:
    events = provider.stream("system", [user("hi")], [], max_tokens=100)
    return "".join([e.text async for e in events if isinstance(e, TextDelta)])


def test_what_needs_no_sdk_is_known_at_once():
    provider = LazyProvider(Settings(provider="openai_compatible", base_url="http://127.0.0.1:9/v1", model="gpt-4o"))
    assert (provider.name, provider.model, provider.context_window) == ("openai_compatible", "gpt-4o", 128_000)
    demo = LazyProvider(Settings())
    assert (demo.name, demo.model) == ("demo", "demo")


@pytest.mark.parametrize(
    ("settings", "names"),
    [
        (Settings(provider="openai_compatible", model="m"), "IAC_CODE_BASE_URL"),
        (Settings(provider="openai_compatible", base_url="http://127.0.0.1:9/v1"), "IAC_CODE_MODEL"),
        (Settings(provider="openai"), "OPENAI_API_KEY"),
        (Settings(provider="nope"), "IAC_CODE_PROVIDER"),
        (Settings(provider="scripted"), "IAC_CODE_SCRIPT"),
    ],
)
def test_a_misconfiguration_is_raised_before_any_model_call(settings, names):
    with pytest.raises(ConfigError, match=names):
        LazyProvider(settings)


async def test_the_provider_is_built_on_the_first_call_with_the_model_chosen_before(tmp_path):
    provider = LazyProvider(_scripted(tmp_path, [{"text": "from the script"}]))
    provider.model = "picked"
    assert await _text(provider) == "from the script"
    assert provider.model == "picked"
    provider.model = "again"
    assert provider._built is not None and provider._built.model == "again"


async def test_a_problem_found_while_building_is_a_provider_error(tmp_path):
    settings = Settings(config_dir=tmp_path, provider="scripted", script=str(tmp_path / "missing.json"))
    provider = LazyProvider(settings)
    with pytest.raises(ProviderError, match="IAC_CODE_SCRIPT"):
        await _text(provider)


def test_session_new_imports_no_model_sdk(tmp_path):
    code = textwrap.dedent(
        f"""
        import asyncio, sys
        from pathlib import Path
        from iac_code.acp.agent import IacAgent
        from iac_code.config import Settings
        from iac_code.host.host import SessionHost

        class Peer:
            async def update(self, *args): pass

        class Outbox:
            def hold(self, session_id): pass

        async def main():
            settings = Settings(
                config_dir=Path({str(tmp_path / "config")!r}),
                provider="openai_compatible",
                base_url="http://127.0.0.1:9/v1",
                model="m",
            )
            host = SessionHost(settings)
            agent = IacAgent(host, Outbox())
            agent._front.peer = Peer()
            result = await agent.new_session({str(tmp_path)!r})
            assert result.models["currentModelId"] == "m"
            await agent.shutdown()
            await host.close()

        asyncio.run(main())
        print(sorted(m for m in ("openai", "anthropic") if m in sys.modules))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


async def test_switching_model_switches_the_context_window(tmp_path):
    provider = LazyProvider(_scripted(tmp_path, [{"text": "ok"}]))
    await _text(provider)  # built
    provider.model = "qwen-max"
    assert provider.context_window == 32_768
    provider.model = "qwen3-coder-plus"
    assert provider.context_window == 1_000_000
    pinned = LazyProvider(
        Settings(provider="openai_compatible", base_url="http://127.0.0.1:9/v1", model="m", context_window=5000)
    )
    pinned.model = "qwen3-coder-plus"
    assert pinned.context_window == 5000, "IAC_CODE_CONTEXT_WINDOW wins"
