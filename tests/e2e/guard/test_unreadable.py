"""What terraform reads is judged too, over ACP with the real agent and terraform (terraform_data only):
iac_plan's error text reaches the model as terraform's diagnostics with quoted values redacted, so a file's
content cannot come back through it; in the guard's namespace, the paths a Read rule denies and the agent's
config dir cannot be read by iac_plan's terraform (its addresses carry nothing of them) nor by a bash command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.wire import AgentProcess, Agents, updates

pytestmark = pytest.mark.usefixtures("terraform")  # skipped without terraform

SECRET = "s3cr3t-outside-4c1e9a"
STATE_SECRET = "s3cr3t-config-77ab02"


@pytest.fixture
def started(model, tmp_path):
    agents = Agents(model.url, tmp_path / "config")
    yield agents.start
    agents.close_all()


@pytest.fixture
def secrets(tmp_path: Path) -> Path:
    folder = tmp_path / "secrets"
    folder.mkdir()
    (folder / "key.txt").write_text(f"{SECRET}\n")
    return folder / "key.txt"


def needs_namespaces(usable: bool) -> None:
    if not usable:
        pytest.skip("commands run without mount namespaces here (/status says why)")


def plan_call(path: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "iac_plan", "arguments": {"path": path}}]}


def finished(seen: list[dict[str, Any]]) -> tuple[str, str]:
    (done,) = [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]
    text = "".join(b["content"]["text"] for b in done.get("content") or [] if b["type"] == "content")
    return done["status"], text


def what_the_model_read(model) -> str:
    return json.dumps(model.requests[-1]["messages"][-1])


def plan(agent: AgentProcess, model, workspace: Path, module: str) -> tuple[str, str]:
    net = workspace / "net"
    net.mkdir()
    (net / "main.tf").write_text(module)
    session_id = agent.new_session(workspace)
    model.add(plan_call("net"), {"text": "planned"})
    _, seen = agent.prompt(session_id, "plan net")
    return finished(seen)


def test_a_plan_error_is_terraforms_diagnostic_without_the_values_it_quotes(started, model, workspace, secrets):
    module = f'locals {{ n = tonumber(file("{secrets}")) }}\nresource "terraform_data" "a" {{ input = local.n }}\n'
    status, text = plan(started(), model, workspace, module)
    assert status == "failed"
    assert SECRET not in text and SECRET not in what_the_model_read(model)
    assert 'Error: Invalid function argument (main.tf, line 1)\n  Invalid value for "(redacted)" parameter' in text


def test_terraform_cannot_read_what_a_read_rule_denies_nor_the_config_dir(
    started, model, workspace, secrets, tmp_path, namespaces_here
):
    needs_namespaces(namespaces_here)
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.json").write_text(json.dumps({"permissions": {"deny": ["Read(../secrets/**)"]}}))
    (config / "kept.txt").write_text(STATE_SECRET)
    # The content as an instance key: on a successful plan, in the address the summary lists.
    module = "".join(
        f'resource "terraform_data" "{name}" {{\n  for_each = toset([file("{path}")])\n}}\n'
        for name, path in (("outside", secrets), ("state", config / "kept.txt"))
    )
    status, text = plan(started(), model, workspace, module)
    assert status == "failed"  # the files are not there for terraform
    assert text.count("Error: Invalid function argument (main.tf, line") == 2
    read = what_the_model_read(model)
    assert SECRET not in text and STATE_SECRET not in text
    assert SECRET not in read and STATE_SECRET not in read


def test_a_bash_command_cannot_read_the_config_dir(started, model, workspace, tmp_path, namespaces_here):
    needs_namespaces(namespaces_here)
    config = tmp_path / "config"
    config.mkdir()
    (config / "kept.txt").write_text(STATE_SECRET)
    skill = config / "skills" / "hello"  # the user's own skills stay: their scripts run through bash
    skill.mkdir(parents=True)
    (skill / "run.sh").write_text("echo hello from the skill\n")
    agent = started()
    session_id = agent.new_session(workspace)
    line = f"ls -A {config}; cat {config}/kept.txt; head -c 15 {config}/iac-code.db; sh {skill}/run.sh; echo end"
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": line}}]}, {"text": "looked"})
    allow = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    _, seen = agent.prompt(session_id, "look", on_permission=lambda request: allow)
    _, text = finished(seen)
    assert "No such file or directory" in text and "hello from the skill\nend" in text
    assert STATE_SECRET not in text and "SQLite format" not in text and "iac-code.db" not in text.split("\n")[0]
    assert (config / "iac-code.db").read_bytes().startswith(b"SQLite format 3")  # the agent's own view is whole


def test_iac_checks_terraform_cannot_read_what_a_read_rule_denies(
    started, model, workspace, secrets, tmp_path, namespaces_here
):
    needs_namespaces(namespaces_here)
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.json").write_text(json.dumps({"permissions": {"deny": ["Read(../secrets/**)"]}}))
    net = workspace / "net"
    net.mkdir()
    (net / "main.tf").write_text(
        f'locals {{ n = tonumber(file("{secrets}")) }}\nresource "terraform_data" "a" {{ input = local.n }}\n'
    )
    subprocess.run(["terraform", "init", "-input=false"], cwd=net, check=True, capture_output=True)
    (net / ".terraform").mkdir(exist_ok=True)  # (a module of built-in resources alone leaves none)
    agent = started()
    session_id = agent.new_session(workspace)
    call = {"name": "iac_check", "arguments": {"path": "net", "checks": ["terraform-validate"]}}
    model.add({"tool_calls": [call]}, {"text": "checked"})
    _, seen = agent.prompt(session_id, "check net")
    _, text = finished(seen)
    assert "main.tf" in text  # validate ran and reported the local it could not compute
    assert SECRET not in text and SECRET not in what_the_model_read(model)
