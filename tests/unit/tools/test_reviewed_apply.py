"""The review of a bound apply (tools/reviewed_apply.py) with a recording request_access and the real
terraform (terraform_data only): what is asked, with what, and which plan files are left."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from iac_code.iac.plans.store import PlanStore
from iac_code.tools.base import AccessDetails, ToolContext, ToolResult
from iac_code.tools.reviewed_apply import ApprovedRun, review

pytestmark = pytest.mark.usefixtures("terraform")  # skipped without terraform


@pytest.fixture
def net(tmp_path: Path) -> Path:
    net = tmp_path / "workspace" / "net"
    net.mkdir(parents=True)
    (net / "main.tf").write_text('resource "terraform_data" "a" {}\n')
    return net


class Asker:
    """Records each question; answers with `refusal`, or raises `error`."""

    def __init__(self, refusal: str | None = None, error: BaseException | None = None) -> None:
        self.refusal, self.error = refusal, error
        self.asked: list[tuple[str, str, str, AccessDetails | None]] = []

    async def __call__(self, subject, access, question, details=None):
        self.asked.append((subject, access, question, details))
        if self.error is not None:
            raise self.error
        return self.refusal


def reviewed(line: str, net: Path, asker: Asker, store: PlanStore) -> ApprovedRun | ToolResult:
    ctx = ToolContext(net.parent, request_access=asker)
    return asyncio.run(review(line, f"Run {line}", ctx, store))


def test_allowed_gives_the_apply_of_the_plan_file_with_apply_options(net, tmp_path):
    asker, store = Asker(), PlanStore(tmp_path / "plans")
    run = reviewed("terraform -chdir=net apply -auto-approve -parallelism=2 -no-color", net, asker, store)
    assert isinstance(run, ApprovedRun) and run.contract is not None
    assert run.applied is not None and run.applied != Path(run.contract["planFile"])
    assert run.line == f"terraform apply -input=false -parallelism=2 -no-color {run.applied}"
    assert run.applied.read_bytes() == Path(run.contract["planFile"]).read_bytes()
    assert run.cwd == net.resolve()
    ((subject, access, question, details),) = asker.asked
    assert (subject, access, question) == ("bash", "infra_change", "terraform apply in net/: 1 to add")
    assert details is not None and details.plan == run.contract


def test_a_cancelled_question_leaves_no_plan_file(net, tmp_path):
    store = PlanStore(tmp_path / "plans")
    with pytest.raises(asyncio.CancelledError):
        reviewed("cd net && terraform apply", net, Asker(error=asyncio.CancelledError()), store)
    assert list((tmp_path / "plans").iterdir()) == []


def test_a_plan_file_the_session_did_not_make_is_asked_as_typed(net, tmp_path):
    subprocess.run(["terraform", "plan", "-out=tfplan", "-input=false"], cwd=net, check=True, capture_output=True)
    asker = Asker()
    run = reviewed("cd net && terraform apply tfplan", net, asker, PlanStore(tmp_path / "plans"))
    assert run == ApprovedRun("cd net && terraform apply tfplan", net.parent)
    ((_, access, question, details),) = asker.asked
    assert (access, question) == ("infra_change", "Run cd net && terraform apply tfplan")
    assert details == AccessDetails(
        "Not bound to a reviewed plan: tfplan is not a plan iac_plan made in this session. "
        "If allowed, the command line runs as typed."
    )


def test_a_directory_outside_the_workspace_is_asked_as_typed(net, tmp_path):
    asker = Asker(refusal="Permission denied.")
    result = reviewed("terraform -chdir=../.. apply", net, asker, PlanStore(tmp_path / "plans"))
    assert result == ToolResult("Permission denied.", is_error=True)
    ((_, _, _, details),) = asker.asked
    assert details is not None and details.plan is None and "outside" in details.text


def test_a_var_file_outside_the_workspace_is_never_planned_nor_quoted(net, tmp_path):
    secret = tmp_path / "secret.tfvars"
    secret.write_text("this line is private and not HCL\n")
    asker = Asker(refusal="Permission denied.")
    store = PlanStore(tmp_path / "plans")
    result = reviewed(f"cd net && terraform apply -var-file={secret}", net, asker, store)
    assert result == ToolResult("Permission denied.", is_error=True)
    ((_, _, question, details),) = asker.asked
    assert question == f"Run cd net && terraform apply -var-file={secret}"  # asked as typed, not bound
    assert details is not None and details.plan is None
    assert "-var-file is outside the workspace" in details.text and "private" not in details.text
    assert not (tmp_path / "plans").exists() or list((tmp_path / "plans").iterdir()) == []
