import acp
import pytest
from acp.schema import InitializeResponse

from iac_code.acp.handshake import PROTOCOL_VERSION, initialize_result, is_plain_initialize, negotiate
from iac_code.config import Settings


@pytest.mark.parametrize(
    ("settings", "configured"),
    [
        (Settings(provider="openai", api_key="k"), True),
        (Settings(), False),
        (Settings(provider="deepseek", api_key="k"), True),
        (Settings(provider="openai"), False),
    ],
    ids=["images", "demo", "text", "no-key"],
)
def test_the_plain_answer_is_exactly_what_the_sdk_schema_emits(settings, configured):
    plain = initialize_result(settings, 1)
    model = InitializeResponse.model_validate(plain)
    emitted = model.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)
    assert emitted == plain
    assert (plain["authMethods"] == []) is configured


def test_capabilities_are_the_seeds():
    caps = initialize_result(Settings(), 1)["agentCapabilities"]
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"] == {"embeddedContext": True, "image": False, "audio": False}
    assert set(caps["sessionCapabilities"]) >= {"list", "close", "resume"}
    assert "fork" not in caps["sessionCapabilities"]  # unstable upstream: named in its _meta only
    assert caps["auth"] == {"logout": {}}
    assert caps["mcpCapabilities"] == {"http": True, "sse": True}


@pytest.mark.parametrize(
    ("settings", "image"),
    [
        (Settings(provider="openai", model="gpt-4.1"), True),
        (Settings(provider="deepseek"), False),
        (Settings(provider="deepseek", images=True), True),
        (Settings(provider="anthropic", images=False), False),
    ],
)
def test_image_capability_follows_the_model_and_the_setting(settings, image):
    assert initialize_result(settings, 1)["agentCapabilities"]["promptCapabilities"]["image"] is image


def test_version_negotiation_follows_the_spec():
    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION
    assert negotiate(1) == 1
    assert negotiate(7) == PROTOCOL_VERSION
    assert negotiate(0) == PROTOCOL_VERSION
    assert negotiate("2024-11-05") == PROTOCOL_VERSION
    assert negotiate(True) == PROTOCOL_VERSION


def test_only_well_formed_initialize_requests_take_the_fast_path():
    assert is_plain_initialize({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    assert not is_plain_initialize({"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": 1}})
    assert not is_plain_initialize({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert not is_plain_initialize(
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"protocolVersion": 1}}
    )


def test_a_provider_that_cannot_be_used_advertises_the_env_var_method_with_the_reason():
    [method] = initialize_result(Settings(provider="openai"), 1)["authMethods"]
    assert method["id"] == "env" and method["description"].startswith("no API key for provider 'openai'")
    InitializeResponse.model_validate(initialize_result(Settings(provider="openai"), 1))


def test_the_servers_directory_is_offered_in_meta(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert initialize_result(Settings(), 1)["_meta"] == {"iac-code/cwd": str(tmp_path)}
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert "_meta" not in initialize_result(Settings(), 1)  # nothing to offer, and initialize still answers
