"""Making a saved plan with the real terraform (offline: only terraform_data), and the API an apply bound to a
reviewed plan uses: the file's sha256, the store's `applied_copy`, `apply_argv`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
import threading
import uuid
from pathlib import Path

import pytest
from tests.processes import MARK, marked_processes, within

from iac_code.iac.plans.runner import (
    PlanFailed,
    PlanRequest,
    apply_argv,
    choose_tool,
    file_sha256,
    make_plan,
    trimmed_error,
)
from iac_code.iac.plans.store import KEPT_PLANS, PlanStore, discard_session_plans, session_plans_dir

MODULE = """\
variable "size" { default = "1" }
resource "terraform_data" "a" { input = var.size }
resource "terraform_data" "b" { input = "b" }
"""


@pytest.fixture
def module(tmp_path: Path) -> Path:
    directory = tmp_path / "ws" / "net"
    directory.mkdir(parents=True)
    (directory / "main.tf").write_text(MODULE)
    return directory


@pytest.fixture
def store(tmp_path: Path) -> PlanStore:
    return PlanStore(session_plans_dir(tmp_path / "config", "sess-1"))


def plan(request: PlanRequest, store: PlanStore):
    return asyncio.run(make_plan(request, store))


def state_serial(directory: Path) -> int | None:
    state = directory / "terraform.tfstate"
    if not state.exists():
        return None
    return int(json.loads(state.read_text())["serial"])


def tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_a_plan_is_private_outside_the_workspace_and_applies_exactly(terraform, module, store, tmp_path):
    before = tree(module)
    made = plan(PlanRequest(module, variables={"size": "3"}, targets=["terraform_data.a"]), store)
    contract = made.contract
    plan_file = Path(contract["planFile"])
    assert plan_file.parent == tmp_path / "config" / "plans" / "sess-1"
    assert stat.S_IMODE(plan_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(plan_file.parent.stat().st_mode) == 0o700
    assert contract["sha256"] == file_sha256(plan_file)
    assert contract["counts"]["create"] == 1  # -target kept b out
    assert [r["address"] for r in contract["resources"]] == ["terraform_data.a"]
    assert made.text.startswith(f"terraform plan in {module}: 1 to add")
    assert tree(module) == before  # planning wrote nothing in the workspace

    (module / "main.tf").write_text(MODULE.replace('"b" { input = "b" }', '"c" { input = "c" }'))  # edited since
    copy = store.applied_copy(plan_file, contract["sha256"])
    assert copy is not None and copy != plan_file and file_sha256(copy) == contract["sha256"]
    assert copy.parent.parent == plan_file.parent and stat.S_IMODE(copy.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    argv = apply_argv(contract, copy, terraform)
    assert argv == [terraform, "apply", "-input=false", str(copy)]
    subprocess.run(argv, cwd=module, check=True, capture_output=True)
    listed = subprocess.run([terraform, "state", "list"], cwd=module, check=True, capture_output=True, text=True)
    assert listed.stdout.split() == ["terraform_data.a"]  # exactly the reviewed plan, not the edited files


def test_a_tampered_plan_file_is_no_longer_the_reviewed_one(terraform, module, store):
    contract = plan(PlanRequest(module), store).contract
    assert store.contract_for(Path(contract["planFile"])) == contract  # a line naming it finds what was reviewed
    assert store.contract_for(module / "other.tfplan") is None
    plan_file = Path(contract["planFile"])
    plan_file.write_bytes(b"something else")
    assert store.applied_copy(plan_file, contract["sha256"]) is None
    assert [p.name for p in plan_file.parent.iterdir()] == [plan_file.name]  # no copy left behind
    link = plan_file.with_name("link.tfplan")
    link.symlink_to(plan_file)
    assert store.applied_copy(link, contract["sha256"]) is None  # a symlink is not followed
    link.unlink()
    store.discard(plan_file)
    assert store.applied_copy(plan_file, contract["sha256"]) is None
    assert store.contract_for(plan_file) is None


def test_replace_destroy_and_refresh_only_reach_terraform(terraform, module, store):
    subprocess.run([terraform, "apply", "-auto-approve", "-input=false"], cwd=module, check=True, capture_output=True)
    serial = state_serial(module)
    replaced = plan(PlanRequest(module, replace=["terraform_data.b"]), store).contract
    assert replaced["counts"]["replace"] == 1 and replaced["resources"][0]["reason"] == "replace_by_request"
    assert plan(PlanRequest(module, destroy=True), store).contract["counts"]["delete"] == 2
    drift = plan(PlanRequest(module, refresh_only=True), store).contract
    assert drift["drift"] == [] and not any(drift["counts"].values())
    assert state_serial(module) == serial  # planning never writes the state


def test_var_files_are_relative_to_the_module(terraform, module, store):
    (module / "big.tfvars").write_text('size = "9"\n')
    subprocess.run([terraform, "apply", "-auto-approve", "-input=false"], cwd=module, check=True, capture_output=True)
    contract = plan(PlanRequest(module, var_files=["big.tfvars"]), store).contract
    assert [(r["address"], r["action"]) for r in contract["resources"]] == [("terraform_data.a", "update")]


def test_a_configuration_error_is_terraforms_own_text_and_leaves_no_plan_file(terraform, module, store):
    (module / "broken.tf").write_text('resource "terraform_data" "c" {\n')
    with pytest.raises(PlanFailed) as failed:
        plan(PlanRequest(module), store)
    message = str(failed.value)
    assert message.startswith(f"terraform plan failed in {module}:")
    assert "Unclosed configuration block" in message and "broken.tf" in message
    assert "╷" not in message and "│" not in message
    assert message.endswith("Fix the configuration in " + str(module) + " and plan again.")
    assert list(store.directory.iterdir()) == []


def test_an_uninitialized_directory_says_to_run_init(terraform, module, store):
    (module / "providers.tf").write_text(
        'terraform {\n  required_providers {\n    null = { source = "hashicorp/null" }\n  }\n}\n'
    )
    with pytest.raises(PlanFailed) as failed:
        plan(PlanRequest(module), store)
    assert f"run `terraform init` in {module}" in str(failed.value)


def test_no_configuration_and_no_binary(module, store, monkeypatch, tmp_path):
    with pytest.raises(PlanFailed, match="No Terraform configuration"):
        plan(PlanRequest(tmp_path), store)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(PlanFailed, match="Neither terraform nor tofu is on PATH"):
        plan(PlanRequest(module), store)


def fake_programs(directory: Path, *names: str) -> str:
    directory.mkdir()
    for name in names:
        program = directory / name
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    return str(directory)


def test_tofu_when_the_directory_says_so_or_it_is_the_only_one(module, tmp_path):
    both = {"PATH": fake_programs(tmp_path / "both", "terraform", "tofu")}
    assert choose_tool(module, both)[0] == "terraform"
    assert choose_tool(module, {"PATH": fake_programs(tmp_path / "tofu_only", "tofu")})[0] == "tofu"
    (module / ".terraform.lock.hcl").write_text('provider "registry.opentofu.org/hashicorp/null" {}\n')
    assert choose_tool(module, both) == ("tofu", str(tmp_path / "both" / "tofu"))
    (module / ".terraform.lock.hcl").unlink()
    (module / "extra.tofu").write_text("")
    assert choose_tool(module, both)[0] == "tofu"


def test_a_lock_file_that_is_a_fifo_says_nothing_and_blocks_nobody(module, tmp_path):
    """A hostile repository's FIFO in place of the lock file: opening it to read would wait for a writer."""
    os.mkfifo(module / ".terraform.lock.hcl")
    both = {"PATH": fake_programs(tmp_path / "both", "terraform", "tofu")}
    chosen: list[tuple[str, str]] = []
    reader = threading.Thread(target=lambda: chosen.append(choose_tool(module, both)), daemon=True)
    reader.start()
    reader.join(10)
    assert chosen == [("terraform", str(tmp_path / "both" / "terraform"))]


def test_a_session_id_names_a_folder_under_plans_and_nothing_else(tmp_path):
    assert session_plans_dir(tmp_path, "abc-123") == tmp_path / "plans" / "abc-123"
    odd = session_plans_dir(tmp_path, "../../etc")
    assert odd.parent == tmp_path / "plans" and ".." not in odd.name
    store = PlanStore(session_plans_dir(tmp_path, "s"))
    made = store.new_plan_file()
    assert store.holds(made) and not store.holds(tmp_path / "x.tfplan")
    discard_session_plans(tmp_path, "s")
    assert not made.exists() and not (tmp_path / "plans" / "s").exists()


def test_a_cancelled_plan_leaves_no_file_and_no_process(terraform, module, store, tmp_path, monkeypatch):
    # No credentials under the home: the plan is not handed over (guard/handover.py would run the terraform
    # of the agent's own PATH, not this slow one).
    monkeypatch.setenv("HOME", str(tmp_path))
    slow = tmp_path / "bin"
    slow.mkdir()
    marker = uuid.uuid4().hex  # in the fake terraform's environment: its pid inside a PID namespace says nothing
    (slow / "terraform").write_text(
        f"#!/bin/sh\nexec {shutil.which('env')} {MARK}={marker} {shutil.which('sleep')} 30\n"
    )
    (slow / "terraform").chmod(0o755)

    async def cancelled() -> list[int]:
        task = asyncio.ensure_future(make_plan(PlanRequest(module), store, {"PATH": str(slow)}))
        for _ in range(200):
            await asyncio.sleep(0.02)
            if running := marked_processes(marker):
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return running

    assert asyncio.run(cancelled()), "the fake terraform never ran"
    assert within(2.0, lambda: marked_processes(marker) == [])
    assert list(store.directory.iterdir()) == []


def test_trimmed_error_drops_the_box_and_caps_the_text():
    boxed = "╷\n│ Error: Bad thing\n│ \n│   on main.tf line 1:\n╵\n"
    assert trimmed_error(boxed) == "Error: Bad thing\n\non main.tf line 1:"
    assert len(trimmed_error("x" * 10_000)) == 2_000


def test_a_session_keeps_its_newest_plans_only(tmp_path):
    store = PlanStore(tmp_path / "plans")
    made = []
    for age in range(KEPT_PLANS + 3):
        path = store.new_plan_file()
        os.utime(path, ns=(age * 10**9, age * 10**9))
        made.append(path)
    assert sorted(store.directory.iterdir()) == sorted(made[3:])


@pytest.mark.parametrize("name", ["variables.tf", "terraform.tfstate", "prod.tfvars"])
def test_a_fifo_terraform_would_read_is_not_handed_to_it(module, store, name):
    os.mkfifo(module / name)
    with pytest.raises(PlanFailed) as refused:
        plan(PlanRequest(module, var_files=["prod.tfvars"]), store)  # before terraform is even looked for
    assert (
        str(refused.value)
        == f"Not planned: {module} holds files terraform must not be handed: {name} (a FIFO (named pipe))."
    )
