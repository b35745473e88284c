"""The reviewed bytes are the applied bytes, over ACP with the real terraform (terraform_data only): another
plan renamed over the reviewed plan file after the agent's check and before terraform starts is not what is
applied; a saved plan terraform refuses is reported by its exit status, never as applied; a shim's question
is recorded in the audit trail as the command it approved.

The race is made deterministic with bash's own start-up: the agent's environment names a BASH_ENV script,
which bash runs before the apply line; it says it is there and waits until the test has swapped the file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.wire import model_env, updates
from tests.processes import within

pytestmark = pytest.mark.usefixtures("terraform")  # skipped without terraform

MODULE = 'variable "value" { default = "reviewed" }\nresource "terraform_data" "db" { input = var.value }\n'
# Sourced by bash before the command line; waits on the FIFO only for the apply line.
HOOK = """case "$BASH_EXECUTION_STRING" in
  *" apply "*) : > {at}; read -r _ < {go} ;;
esac
"""


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def allow(request: dict[str, Any]) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


def finished_text(seen: list[dict[str, Any]]) -> tuple[str, str]:
    (done,) = [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]
    text = "".join(b["content"]["text"] for b in done.get("content") or [] if b["type"] == "content")
    return done["status"], text


def applied_input(net: Path) -> str:
    (resource,) = json.loads((net / "terraform.tfstate").read_text())["resources"]
    return str(resource["instances"][0]["attributes"]["input"]["value"])


def terraform(net: Path, *args: str) -> None:
    subprocess.run(["terraform", *args, "-input=false"], cwd=net, check=True, capture_output=True)


class Swapper:
    """Renames `other` over the reviewed plan file once bash is about to run the apply line, then lets it go."""

    def __init__(self, hooks: Path, other: Path) -> None:
        self.at, self.go, self.other = hooks / "at-apply", hooks / "go", other
        os.mkfifo(self.go)
        self.script = hooks / "bash_env.sh"
        self.script.write_text(HOOK.replace("{at}", str(self.at)).replace("{go}", str(self.go)))
        self.swapped = False
        self._thread: threading.Thread | None = None

    def allow_then_swap(self, request: dict[str, Any]) -> dict[str, Any]:
        reviewed = Path(request["params"]["toolCall"]["rawInput"]["plan"]["planFile"])
        self._thread = threading.Thread(target=self._swap, args=(reviewed,), daemon=True)
        self._thread.start()
        return allow(request)

    def _swap(self, reviewed: Path) -> None:
        if not within(60, self.at.exists):
            return  # bash never reached the apply line: nothing waits on the FIFO
        staged = reviewed.with_name("staged")
        shutil.copyfile(self.other, staged)
        os.rename(staged, reviewed)  # a plan the user never saw, under the reviewed plan's name
        self.swapped = True
        with self.go.open("w") as go:
            go.write("go\n")

    def join(self) -> None:
        assert self._thread is not None
        self._thread.join(60)


def test_a_plan_renamed_over_the_reviewed_one_after_the_check_is_not_applied(spawn, model, workspace, tmp_path):
    net = workspace / "net"
    net.mkdir()
    (net / "main.tf").write_text(MODULE)
    other = tmp_path / "other.tfplan"
    terraform(net, "plan", "-var=value=unreviewed", f"-out={other}")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    swapper = Swapper(hooks, other)
    agent = spawn(BASH_ENV=str(swapper.script))
    session_id = agent.new_session(workspace)
    model.add(bash("cd net && terraform apply -auto-approve"), {"text": "applied"})
    _, seen = agent.prompt(session_id, "apply net", on_permission=swapper.allow_then_swap)
    swapper.join()
    assert swapper.swapped  # the other plan was in place before terraform started
    status, text = finished_text(seen)
    assert status == "completed", text
    assert text.startswith("Applied the reviewed plan (1 to add): terraform apply -input=false ")
    assert applied_input(net) == "reviewed"  # not "unreviewed": terraform was given the bytes that were hashed


def test_a_saved_plan_terraform_refuses_is_reported_by_its_exit_status(spawn, model, workspace):
    net = workspace / "net"
    net.mkdir()
    (net / "main.tf").write_text(MODULE)
    terraform(net, "apply", "-auto-approve")
    agent = spawn()
    session_id = agent.new_session(workspace)
    model.add({"tool_calls": [{"name": "iac_plan", "arguments": {"path": "net", "vars": {"value": "v2"}}}]})
    model.add({"text": "planned"})
    _, seen = agent.prompt(session_id, "plan net")
    (planned,) = [u for u in updates(seen, "tool_call_update") if u.get("status") == "completed"]
    made = planned["rawOutput"]["plan"]
    # Meanwhile the state is made anew (another lineage): terraform refuses the saved plan.
    (net / "terraform.tfstate").unlink()
    terraform(net, "apply", "-auto-approve", "-var=value=other")
    model.add(bash(f"cd net && terraform apply {made['planFile']}"), {"text": "refused"})
    _, seen = agent.prompt(session_id, "apply that plan", on_permission=allow)
    status, text = finished_text(seen)
    assert status == "failed"
    assert text.startswith("The apply of the reviewed plan (1 to change) failed: terraform exited with status 1")
    assert "different state lineage" in text and "Applied the reviewed plan" not in text
    assert applied_input(net) == "other"


def test_the_audit_records_the_command_a_shim_asked_about_not_the_line(spawn, model, workspace, tmp_path):
    net = workspace / "net"
    net.mkdir()
    (net / "main.tf").write_text(MODULE)
    terraform(net, "apply", "-auto-approve")
    (workspace / "tidy.sh").write_text("terraform -chdir=net destroy -auto-approve\n")
    agent = spawn()
    session_id = agent.new_session(workspace)
    model.add(bash("sh tidy.sh"), {"text": "done"})
    _, seen = agent.prompt(session_id, "tidy", on_permission=allow)
    asked = [m["params"]["toolCall"]["title"] for m in seen if m.get("method") == "session/request_permission"]
    assert asked == ["Run sh tidy.sh", "Infrastructure change: terraform -chdir=net destroy -auto-approve"]
    env = model_env(model.url, tmp_path / "config")
    done = subprocess.run(
        [sys.executable, "-m", "iac_code.cli", "audit", "--json", "--session", session_id],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["kind"], r["arguments"]) for r in records] == [
        ("decision", '{"command":"sh tidy.sh"}'),
        ("decision", '{"command":"terraform -chdir=net destroy -auto-approve"}'),  # what was approved
        ("outcome", '{"command":"terraform -chdir=net destroy -auto-approve"}'),
    ]
