"""ACP's additionalDirectories on a real `iac-code acp` over stdio: a directory beside the cwd is part of the
session's workspace (a write there is asked and done, grep and glob find its files, its AGENTS.md reaches the
system prompt, a path rule names it), a path outside every root is refused, the list is stored (session/list)
and comes back after a restart with session/load, and a relative, missing or non-directory path is -32602
naming the entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.wire import AgentProcess, select, updates


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def new_session(agent: AgentProcess, cwd: Path, *directories: Path | str) -> str:
    params = {"cwd": str(cwd), "mcpServers": [], "additionalDirectories": [str(d) for d in directories]}
    return str(agent.result("session/new", params)["sessionId"])


def finished(seen: list[dict[str, Any]]) -> dict[str, Any]:
    (done,) = [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]
    return done


def result_text(update: dict[str, Any]) -> str:
    return "".join(b["content"]["text"] for b in update.get("content") or [] if b["type"] == "content")


@pytest.fixture
def extra(tmp_path: Path) -> Path:
    """An additional directory beside the workspace: a monorepo's modules/ beside envs/."""
    path = tmp_path / "modules"
    path.mkdir()
    return path.resolve()


def test_the_handshake_advertises_additional_directories(agent):
    answer = agent.result("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    assert answer["agentCapabilities"]["sessionCapabilities"]["additionalDirectories"] == {}


def test_a_write_into_an_additional_directory_is_asked_and_done(agent, model, workspace, extra):
    session_id = new_session(agent, workspace, extra)
    target = extra / "network" / "main.tf"
    model.add(tool("write_file", path=str(target), content='resource "x" "y" {}\n'), {"text": "written"})
    _, seen = agent.prompt(session_id, "write it", on_permission=select("allow_once"))
    (asked,) = [m for m in seen if m.get("method") == "session/request_permission"]
    assert asked["params"]["toolCall"]["locations"] == [{"path": str(target)}]
    assert finished(seen)["status"] == "completed"
    assert target.read_text() == 'resource "x" "y" {}\n'


def test_a_path_outside_every_root_is_refused(agent, model, workspace, extra, tmp_path):
    session_id = new_session(agent, workspace, extra)
    outside = tmp_path / "elsewhere.tf"
    model.add(tool("write_file", path=str(outside), content="x"), {"text": "refused"})
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "bypass-permissions"})
    _, seen = agent.prompt(session_id, "write it")
    done = finished(seen)
    assert done["status"] == "failed"
    assert "is outside the workspace" in result_text(done)
    assert not outside.exists()


def test_grep_and_glob_find_the_files_of_an_additional_directory(agent, model, workspace, extra):
    (extra / "vpc").mkdir()
    (extra / "vpc" / "main.tf").write_text('resource "aws_vpc" "main" {}\n')
    session_id = new_session(agent, workspace, extra)
    model.add(tool("glob", pattern="*.tf", path=str(extra)), {"text": "found"})
    _, seen = agent.prompt(session_id, "find the modules")
    assert result_text(finished(seen)) == f"{extra}/vpc/main.tf"
    model.add(tool("grep", pattern="aws_vpc", path=str(extra)), {"text": "found"})
    _, seen = agent.prompt(session_id, "where is the vpc")
    assert result_text(finished(seen)) == f'{extra}/vpc/main.tf:1:resource "aws_vpc" "main" {{}}'


def test_the_agents_md_of_an_additional_directory_reaches_the_system_prompt(agent, model, workspace, extra):
    (extra / "AGENTS.md").write_text("Modules pin their providers with ~> constraints.\n")
    session_id = new_session(agent, workspace, extra)
    model.add({"text": "ok"})
    agent.prompt(session_id, "hello")
    system = model.requests[-1]["messages"][0]["content"]
    assert f"Instructions from {extra / 'AGENTS.md'}:\nModules pin their providers with ~> constraints." in system
    assert f"Additional directories (part of the workspace too; name their files by absolute path): {extra}" in system


def test_the_skills_of_an_additional_directory_are_offered(agent, model, workspace, extra):
    folder = extra / ".agents" / "skills" / "module-layout"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: module-layout\ndescription: How modules are laid out.\n---\nBody\n")
    session_id = new_session(agent, workspace, extra)
    model.add({"text": "ok"})
    agent.prompt(session_id, "hello")
    assert "- module-layout: How modules are laid out." in model.requests[-1]["messages"][0]["content"]


def test_a_file_linked_in_the_prompt_from_an_additional_directory_is_read(agent, model, workspace, extra):
    (extra / "variables.tf").write_text('variable "region" {}\n')
    session_id = new_session(agent, workspace, extra)
    model.add({"text": "ok"})
    link = {"type": "resource_link", "uri": f"file://{extra}/variables.tf", "name": "variables.tf"}
    agent.prompt(session_id, [{"type": "text", "text": "review"}, link])
    assert 'variable "region" {}' in model.requests[-1]["messages"][-1]["content"]


def test_a_user_rule_names_an_additional_directory_by_its_absolute_path(spawn, model, workspace, extra, tmp_path):
    config = tmp_path / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.json").write_text(json.dumps({"permissions": {"deny": [f"Write({extra}/locked/**)"]}}))
    agent = spawn()
    session_id = new_session(agent, workspace, extra)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "bypass-permissions"})
    model.add(tool("write_file", path=str(extra / "locked" / "a.tf"), content="x"), {"text": "denied"})
    _, seen = agent.prompt(session_id, "write it")
    done = finished(seen)
    assert done["status"] == "failed"
    assert result_text(done) == f'Denied by rule "Write({extra}/locked/**)" in {config / "config.json"}'
    assert not (extra / "locked").exists()
    model.add(tool("write_file", path=str(extra / "open" / "a.tf"), content="x"), {"text": "written"})
    _, seen = agent.prompt(session_id, "write it there")  # beside the locked folder, the rule does not fit
    assert finished(seen)["status"] == "completed" and (extra / "open" / "a.tf").read_text() == "x"


def test_an_additional_directorys_own_deny_rule_holds_from_that_directory(agent, model, workspace, extra):
    rules = extra / ".iac-code" / "settings.json"
    rules.parent.mkdir()
    rules.write_text(json.dumps({"permissions": {"deny": ["Read(secret.txt)"], "allow": ["Write(**)"]}}))
    (extra / "secret.txt").write_text("hunter2")
    session_id = new_session(agent, workspace, extra)
    model.add(tool("read_file", path=str(extra / "secret.txt")), {"text": "denied"})
    _, seen = agent.prompt(session_id, "read it")
    done = finished(seen)
    assert done["status"] == "failed"
    assert result_text(done) == f'Denied by rule "Read({extra}/secret.txt)" in {rules.resolve()}'
    # its allow rule is not in force: the repository beside the cwd is not trusted
    model.add(tool("write_file", path=str(extra / "b.tf"), content="x"), {"text": "no"})
    _, seen = agent.prompt(session_id, "write it", on_permission=select("reject_once"))
    assert [m for m in seen if m.get("method") == "session/request_permission"]
    assert not (extra / "b.tf").exists()


def test_the_directories_are_listed_and_stay_with_the_session_after_a_restart(spawn, model, workspace, extra):
    first = spawn()
    session_id = new_session(first, workspace, extra)
    listed = first.result("session/list", {"cwd": str(workspace)})["sessions"]
    assert [(s["sessionId"], s["additionalDirectories"]) for s in listed] == [(session_id, [str(extra)])]
    first.close()

    second = spawn()
    listed = second.result("session/list", {"cwd": str(workspace)})["sessions"]
    assert [(s["sessionId"], s["additionalDirectories"]) for s in listed] == [(session_id, [str(extra)])]
    params = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": [], "additionalDirectories": [str(extra)]}
    second.result("session/load", params)
    second.result("session/set_mode", {"sessionId": session_id, "modeId": "bypass-permissions"})
    model.add(tool("write_file", path=str(extra / "after.tf"), content="y"), {"text": "written"})
    _, seen = second.prompt(session_id, "write it")
    assert finished(seen)["status"] == "completed"
    assert (extra / "after.tf").read_text() == "y"


def test_a_load_without_the_directories_leaves_them_out_as_the_spec_says(agent, model, workspace, extra):
    session_id = new_session(agent, workspace, extra)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "bypass-permissions"})
    model.add(tool("write_file", path=str(extra / "b.tf"), content="x"), {"text": "written"})
    _, seen = agent.prompt(session_id, "write it")
    assert finished(seen)["status"] == "completed"
    agent.result("session/resume", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    listed = agent.result("session/list", {"cwd": str(workspace)})["sessions"]
    assert [s.get("additionalDirectories") for s in listed if s["sessionId"] == session_id] == [None]
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "bypass-permissions"})
    model.add(tool("write_file", path=str(extra / "c.tf"), content="x"), {"text": "refused"})
    _, seen = agent.prompt(session_id, "write it")
    assert "is outside the workspace" in result_text(finished(seen))
    assert not (extra / "c.tf").exists()


def test_a_fork_takes_the_directories_its_request_gives(agent, workspace, extra, tmp_path):
    other = tmp_path / "shared"
    other.mkdir()
    session_id = new_session(agent, workspace, extra)
    params = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": [], "additionalDirectories": [str(other)]}
    fork_id = agent.result("session/fork", params)["sessionId"]
    listed = {s["sessionId"]: s.get("additionalDirectories") for s in agent.result("session/list", {})["sessions"]}
    assert (listed[session_id], listed[fork_id]) == ([str(extra)], [str(other.resolve())])


def test_bad_directories_are_invalid_params_naming_the_entry(agent, workspace, extra, tmp_path):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    cases = {
        "modules": "not an absolute path: 'modules'",
        str(tmp_path / "missing"): f"no such directory: {tmp_path / 'missing'}",
        str(a_file): f"no such directory: {a_file}",
    }
    for bad, problem in cases.items():
        params = {"cwd": str(workspace), "mcpServers": [], "additionalDirectories": [str(extra), bad]}
        response = agent.call("session/new", params)
        assert response["error"]["code"] == -32602, response
        assert response["error"]["data"] == {"additionalDirectories[1]": problem}


def test_the_agents_own_state_is_refused_as_an_additional_directory(spawn, workspace, tmp_path):
    agent = spawn()
    config = (tmp_path / "config").resolve()
    response = agent.call(
        "session/new", {"cwd": str(workspace), "mcpServers": [], "additionalDirectories": [str(config)]}
    )
    assert response["error"]["code"] == -32602
    (problem,) = response["error"]["data"].values()
    assert list(response["error"]["data"]) == ["additionalDirectories[0]"]
    assert "is inside the agent's own state" in problem
