"""provider_schema over ACP with the scripted model: the built-in provider's types with the real terraform
(offline: `terraform init` needs nothing for them), a generated ~50 MB schema of a big provider served by a
fake terraform (answered by later sessions from the cache without running it again), the closest names, a
module that is not initialized, a path outside the workspace."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.wire import AgentProcess, updates
from tests.fakes.provider_schemas import PINNED, PROVIDER, fake_terraform, initialized_module, write_large_schema

BUILTIN = "terraform.io/builtin/terraform"
MODULE = """\
resource "terraform_data" "marker" { input = "x" }
data "terraform_remote_state" "network" {
  backend = "local"
  config  = { path = "network.tfstate" }
}
"""
LARGE_TURN = 90  # seconds: the cold call parses and stores 50 MB, slow on a loaded machine


def schema_call(**arguments: Any) -> dict[str, Any]:
    return {"name": "provider_schema", "arguments": arguments}


def ask(agent: AgentProcess, session_id: str, text: str, timeout: float = 15) -> list[dict[str, Any]]:
    """One prompt's updates (a permission request fails it: the tool never asks for these modules)."""
    request_id = agent.start_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )
    response, seen = agent.until(lambda m: m.get("id") == request_id and "method" not in m, timeout)
    assert response["result"]["stopReason"] == "end_turn"
    assert not [m for m in seen if m.get("method") == "session/request_permission"]
    return seen


def finished(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]


def shown_text(update: dict[str, Any]) -> str:
    return "".join(block["content"]["text"] for block in update.get("content") or [] if block["type"] == "content")


def tool_messages(model) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]


@pytest.fixture
def builtin_module(workspace: Path, terraform: str) -> Path:
    module = workspace / "mod"
    module.mkdir()
    (module / "main.tf").write_text(MODULE)
    subprocess.run([terraform, "init", "-input=false"], cwd=module, check=True, capture_output=True)
    return module


@pytest.mark.parametrize("mode", ["default", "read-only"])
def test_built_in_types_of_an_initialized_module(agent, model, workspace, builtin_module, mode):
    session_id = agent.new_session(workspace)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": mode})
    model.add(
        {
            "tool_calls": [
                schema_call(type="terraform_data", path="mod"),
                schema_call(type="terraform_remote_state", kind="data", path="mod"),
            ]
        },
        {"text": "looked up"},
    )
    seen = ask(agent, session_id, "what does terraform_data take?")
    titles = [(u["title"], u["kind"]) for u in updates(seen, "tool_call")]
    assert titles == [
        ("Schema of resource terraform_data", "read"),
        ("Schema of data source terraform_remote_state", "read"),
    ]
    resource, data = finished(seen)
    assert resource["status"] == data["status"] == "completed"
    version = subprocess.run(["terraform", "version", "-json"], capture_output=True, text=True, check=True).stdout
    assert resource["rawOutput"]["provider"] == BUILTIN and resource["rawOutput"]["version"] in version
    attributes = {a["name"]: (a["optional"], a["computed"]) for a in resource["rawOutput"]["attributes"]}
    assert attributes == {
        "id": (False, True),
        "input": (True, False),
        "output": (False, True),
        "triggers_replace": (True, False),
    }
    backend = next(a for a in data["rawOutput"]["attributes"] if a["name"] == "backend")
    assert backend["required"] and backend["type"] == "string" and backend["description"]
    assert updates(seen, "tool_call")[1]["locations"] == [{"path": str(builtin_module.resolve())}]
    resource_text, data_text = tool_messages(model)
    assert (
        resource_text.startswith(f'resource "terraform_data": {BUILTIN} ')
        and "  input: any, optional\n" in resource_text
    )
    assert "  backend: string, required — The remote backend to use" in data_text
    assert shown_text(resource) == resource_text


def test_unknown_types_and_paths_outside_are_failed_calls(agent, model, workspace, builtin_module):
    session_id = agent.new_session(workspace)
    model.add(
        {"tool_calls": [schema_call(type="terraform_dat", path="mod"), schema_call(type="terraform_data", path="..")]},
        {"text": "no such type"},
    )
    closest, outside = finished(ask(agent, session_id, "look up terraform_dat"))
    assert closest["status"] == outside["status"] == "failed"
    assert shown_text(closest).startswith(
        f'No resource type "terraform_dat" in the providers of {builtin_module.resolve()}'
    )
    assert shown_text(closest).rstrip().endswith("Closest resource types: terraform_data.")
    assert "is outside the workspace" in shown_text(outside)


def test_a_module_not_initialized_says_to_run_init(agent, model, workspace, terraform):
    module = workspace / "net"
    module.mkdir()
    (module / "main.tf").write_text(
        'terraform {\n  required_providers {\n    null = { source = "hashicorp/null" }\n  }\n}\n'
    )
    session_id = agent.new_session(workspace)
    model.add({"tool_calls": [schema_call(type="null_resource", path="net")]}, {"text": "not initialized"})
    (done,) = finished(ask(agent, session_id, "null_resource?"))
    assert done["status"] == "failed"
    assert shown_text(done).startswith(f"{module.resolve()} is not initialized (it has no .terraform.lock.hcl")
    assert "run `terraform init` there" in shown_text(done)


@pytest.fixture(scope="module")
def large_schema(tmp_path_factory) -> Path:
    return write_large_schema(tmp_path_factory.mktemp("schemas") / "huge.json")


def test_a_large_provider_is_answered_from_the_cache_by_later_sessions(spawn, model, workspace, tmp_path, large_schema):
    runs = tmp_path / "runs.log"
    runs.touch()
    fake_terraform(tmp_path / "bin", large_schema, runs)
    path = f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"
    module = initialized_module(workspace / "big")

    first = spawn(PATH=path)
    model.add({"tool_calls": [schema_call(type="huge_thing_0042", path="big")]}, {"text": "read"})
    (done,) = finished(ask(first, first.new_session(workspace), "huge_thing_0042?", LARGE_TURN))
    assert done["status"] == "completed", shown_text(done)
    schema = done["rawOutput"]
    assert (schema["provider"], schema["version"], schema["type"]) == (PROVIDER, PINNED, "huge_thing_0042")
    assert len(schema["attributes"]) == 60 and [b["name"] for b in schema["blocks"]] == [
        "nested_0",
        "nested_1",
        "nested_2",
    ]
    assert (schema["blocks"][0]["minItems"], schema["blocks"][2]["maxItems"]) == (1, 1)
    assert runs.read_text().splitlines() == [str(module.resolve())]
    first.close()

    later = spawn(PATH=path)  # another process on the same config directory: the cache file answers
    session_id = later.new_session(workspace)
    model.add(
        {
            "tool_calls": [
                schema_call(type="huge_lookup_0007", kind="data", path="big"),
                schema_call(type="huge_thing_00042", path="big"),
            ]
        },
        {"text": "read"},
    )
    data, missing = finished(ask(later, session_id, "huge_lookup_0007?"))
    assert data["status"] == "completed" and data["rawOutput"]["type"] == "huge_lookup_0007"
    assert data["rawOutput"]["attributes"][0] == {
        "name": "attr_00",
        "type": "string",
        "required": True,
        "optional": False,
        "computed": False,
        "sensitive": False,
        "deprecated": False,
        "description": "Attribute 7 of a generated type; it says what the value means and how it is used.",
    }
    assert missing["status"] == "failed" and "Closest resource types: huge_thing_0042" in shown_text(missing)
    assert len(runs.read_text().splitlines()) == 1
