"""The iac_plan tool's face: arguments, the question before shipped provider plugins start, locations."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.terraform_binary import require_terraform

from iac_code.messages import Location
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.iac_plan import IacPlanTool, plan_request, preview_call

MODULE = """\
resource "terraform_data" "web" { input = "w" }

module "net" {
  source = "./net"
}
"""
NET = 'resource "terraform_data" "subnet" {\n  count = 2\n  input = count.index\n}\n'


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "net").mkdir(parents=True)
    (root / "main.tf").write_text(MODULE)
    (root / "net" / "main.tf").write_text(NET)
    return root


def run(tool: IacPlanTool, args: dict[str, Any], ctx: ToolContext):
    return asyncio.run(tool.run(args, ctx))


def test_locations_point_at_the_declaring_blocks(workspace, tmp_path):
    require_terraform()
    subprocess.run(["terraform", "init", "-input=false"], cwd=workspace, check=True, capture_output=True)
    result = run(IacPlanTool(tmp_path / "plans"), {"path": "main.tf"}, ToolContext(workspace))
    plan = result.raw_output["plan"]
    assert plan["directory"] == str(workspace.resolve())
    assert plan["counts"]["create"] == 3
    assert result.locations == [
        Location(path=str(workspace.resolve() / "main.tf"), line=1),
        Location(path=str(workspace.resolve() / "main.tf"), line=3),  # module.net.terraform_data.subnet[0] and [1]
    ]
    assert result.text.startswith(f"terraform plan in {workspace.resolve()}: 3 to add")
    assert not result.is_error


def test_shipped_provider_plugins_are_asked_for_and_a_refusal_runs_nothing(workspace, tmp_path):
    (workspace / ".terraform" / "providers" / "evil").mkdir(parents=True)
    asked: list[tuple[str, str, str]] = []

    async def refuse(subject: str, access: str, question: str) -> str | None:
        asked.append((subject, access, question))
        return "Permission denied."

    tool = IacPlanTool(tmp_path / "plans")
    with pytest.raises(ToolError) as refused:
        run(tool, {}, ToolContext(workspace, request_access=refuse))
    assert asked == [
        (
            "iac_plan:providers",
            "workspace_code",
            "iac_plan wants to run terraform plan, which starts the provider plugins in .terraform",
        )
    ]
    assert str(refused.value) == (
        "Not planned: Permission denied (terraform plan would start the provider plugins in .terraform)."
    )
    assert not (tmp_path / "plans").exists() or not any((tmp_path / "plans").iterdir())
    with pytest.raises(ToolError, match="no one to ask"):
        run(tool, {}, ToolContext(workspace))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"path": "nowhere"}, "path not found: nowhere"),
        ({"path": "../elsewhere"}, "outside the workspace"),
        ({"targets": "aws_x.y"}, "'targets' must be a list"),
        ({"replace": ["-lock=false"]}, "'replace' must be a list"),
        ({"destroy": "yes"}, "'destroy' must be true or false"),
        ({"vars": ["a"]}, "'vars' must be an object"),
        ({"var_files": ["../../secret.tfvars"]}, "outside the workspace"),
    ],
)
def test_bad_arguments_are_errors_the_model_can_act_on(workspace, args, message):
    with pytest.raises(ToolError, match=message):
        plan_request(args, workspace)


def test_arguments_become_terraform_flags(workspace):
    request = plan_request(
        {
            "path": "net",
            "destroy": True,
            "targets": ["a.b"],
            "replace": ["c.d"],
            "var_files": ["x.tfvars"],
            "vars": {"n": "1", "list": [1, 2]},
        },
        workspace,
    )
    assert request.directory == workspace.resolve() / "net"
    assert request.flags() == [
        "-destroy",
        "-target=a.b",
        "-replace=c.d",
        "-var-file=x.tfvars",
        "-var=n=1",
        "-var=list=[1, 2]",
    ]


def test_preview_call_plans_the_given_directory_or_the_workspace():
    assert preview_call("  net ").arguments == {"path": "net"}
    assert preview_call("").arguments == {"path": "."}
    assert preview_call("").name == "iac_plan"


def test_a_root_module_in_an_additional_directory_is_planned_there(workspace, tmp_path):
    extra = tmp_path / "modules"
    (extra / "net").mkdir(parents=True)
    roots = (workspace, extra)
    request = plan_request({"path": str(extra / "net"), "var_files": ["../prod.tfvars"]}, roots)
    assert request.directory == extra.resolve() / "net"
    with pytest.raises(ToolError, match="outside the workspace"):
        plan_request({"path": str(extra / "net"), "var_files": ["../../secret.tfvars"]}, roots)
    with pytest.raises(ToolError, match="outside the workspace"):
        plan_request({"path": str(extra / "net")}, workspace)  # the cwd alone
