"""initialize, session/new, modes/models/config options, close, list and delete, on the wire."""

from __future__ import annotations

from tests.e2e.acp.wire import AgentProcess, model_env, updates

from iac_code.skills.discovery import bundled_skills
from iac_code.skills.skill_file import Skill

BUNDLED_SKILLS = [skill.name for skill in bundled_skills() if isinstance(skill, Skill)]


def test_initialize_answers_the_seed_capabilities_and_repeats_itself(agent):
    first = agent.result("initialize", {"protocolVersion": 1})
    assert first["protocolVersion"] == 1
    assert first["agentCapabilities"] == {
        "loadSession": True,
        "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
        "sessionCapabilities": {
            "list": {},
            "close": {},
            "resume": {},
            "delete": {},
            "additionalDirectories": {},
            "_meta": {"iac-code/unstable": {"fork": {}}},
        },
        "mcpCapabilities": {"http": True, "sse": True},
        "auth": {"logout": {}},
    }
    assert first["agentInfo"]["name"] == "iac-code"
    assert first["authMethods"] == []  # a model is configured
    assert agent.result("initialize", {"protocolVersion": 1}) == first


def test_initialize_answers_our_version_for_an_unknown_one(agent):
    assert agent.result("initialize", {"protocolVersion": 7})["protocolVersion"] == 1


def test_auth_methods_name_the_variables_when_no_model_is_configured(tmp_path):
    env = model_env("http://127.0.0.1:9", tmp_path)
    del env["IAC_CODE_PROVIDER"]
    agent = AgentProcess(env)
    try:
        methods = agent.initialize()["authMethods"]
        assert methods[0]["type"] == "env_var"
        assert {v["name"] for v in methods[0]["vars"]} >= {"IAC_CODE_PROVIDER", "IAC_CODE_API_KEY", "IAC_CODE_MODEL"}
    finally:
        assert agent.close() == 0


def test_new_session_answers_modes_models_and_config_options_then_commands(agent, workspace):
    request_id = agent.start_request("session/new", {"cwd": str(workspace)})  # mcpServers omitted on purpose
    response, before = agent.response(request_id)
    assert before == []  # nothing about the session before the client has its id
    result = response["result"]
    assert result["sessionId"]
    assert result["modes"]["currentModeId"] == "default"
    assert [m["id"] for m in result["modes"]["availableModes"]] == [
        "default",
        "accept-edits",
        "read-only",
        "plan",
        "bypass-permissions",
    ]
    assert result["models"]["currentModelId"] == "scripted-model"
    assert "scripted-model" in [m["modelId"] for m in result["models"]["availableModels"]]
    mode_option, model_option = result["configOptions"]
    assert (mode_option["id"], mode_option["category"], mode_option["currentValue"]) == ("mode", "mode", "default")
    assert (model_option["id"], model_option["category"], model_option["currentValue"]) == (
        "model",
        "model",
        "scripted-model",
    )
    commands, _ = agent.until(lambda m: m.get("method") == "session/update")
    assert commands["params"]["sessionId"] == result["sessionId"]
    update = commands["params"]["update"]
    assert update["sessionUpdate"] == "available_commands_update"
    assert [c["name"] for c in update["availableCommands"]] == [
        "compact",
        "clear",
        "help",
        "check",
        "status",
        "cost",
        "permissions",
        "preview",
        "init",
        *BUNDLED_SKILLS,
    ]


def test_new_session_rejects_a_relative_or_missing_cwd(agent, workspace):
    relative = agent.call("session/new", {"cwd": "work", "mcpServers": []})
    assert relative["error"]["code"] == -32602
    assert "absolute" in relative["error"]["data"]["cwd"]
    missing = agent.call("session/new", {"cwd": str(workspace / "nope"), "mcpServers": []})
    assert missing["error"]["code"] == -32602
    assert "no such directory" in missing["error"]["data"]["cwd"]
    absent = agent.call("session/new", {"mcpServers": []})
    assert absent["error"] == {"code": -32602, "message": "Invalid params", "data": {"cwd": "Field required"}}


def test_set_mode_and_set_config_option_send_the_same_updates(agent, workspace):
    """A client that follows the legacy `modes` and one that follows `configOptions` both hear of a mode
    change, whichever method made it."""
    session_id = agent.new_session(workspace)
    params = {"sessionId": session_id, "configId": "mode", "value": "read-only"}
    response, before = agent.response(agent.start_request("session/set_config_option", params))
    options = response["result"]["configOptions"]
    assert [o["currentValue"] for o in options] == ["read-only", "scripted-model"]
    assert updates(before) == [
        {"sessionUpdate": "current_mode_update", "currentModeId": "read-only"},
        {"sessionUpdate": "config_option_update", "configOptions": options},
    ]

    response, before = agent.response(
        agent.start_request("session/set_mode", {"sessionId": session_id, "modeId": "accept-edits"})
    )
    assert response["result"] == {}
    options[0]["currentValue"] = "accept-edits"
    assert updates(before) == [
        {"sessionUpdate": "current_mode_update", "currentModeId": "accept-edits"},
        {"sessionUpdate": "config_option_update", "configOptions": options},
    ]

    via_alias = agent.result("config/set", {"sessionId": session_id, "configId": "mode", "value": "default"})
    assert via_alias["configOptions"][0]["currentValue"] == "default"


def test_set_model_legacy_and_bad_values(agent, workspace):
    session_id = agent.new_session(workspace)
    assert agent.result("session/set_model", {"sessionId": session_id, "modelId": "scripted-model"}) == {}
    bad = agent.call("session/set_config_option", {"sessionId": session_id, "configId": "model", "value": "nope"})
    assert bad["error"]["code"] == -32602 and "value" in bad["error"]["data"]
    unknown = agent.call("session/set_config_option", {"sessionId": session_id, "configId": "color", "value": "x"})
    assert unknown["error"]["code"] == -32602 and "configId" in unknown["error"]["data"]
    bad_mode = agent.call("session/set_mode", {"sessionId": session_id, "modeId": "yolo"})
    assert bad_mode["error"]["code"] == -32602 and "modeId" in bad_mode["error"]["data"]


def test_close_frees_the_session(agent, workspace):
    session_id = agent.new_session(workspace)
    assert agent.result("session/close", {"sessionId": session_id}) == {}
    later = agent.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]})
    assert later["error"] == {"code": -32602, "message": "Invalid params", "data": {"sessionId": "Session not found"}}


def test_list_alias_and_delete(agent, workspace):
    session_id = agent.new_session(workspace)
    listed = agent.result("session/list", {"cwd": str(workspace)})["sessions"]
    assert [s["sessionId"] for s in listed] == [session_id]
    assert agent.result("sessions/list", {"cwd": str(workspace)})["sessions"] == listed
    assert agent.result("session/delete", {"sessionId": session_id}) == {}
    assert agent.result("session/list", {"cwd": str(workspace)})["sessions"] == []
    assert agent.result("session/delete", {"sessionId": session_id}) == {}  # idempotent
