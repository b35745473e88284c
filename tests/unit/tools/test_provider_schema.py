"""provider_schema with a fake terraform on PATH (tests/fakes/provider_schemas.py): schemas kept per type and
answered without running terraform again, the closest names, the provider plugins asked about before they
start, and every way of not being able to answer."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.fakes.provider_schemas import BINARY_VERSION, PINNED, PROVIDER, fake_terraform, initialized_module

from iac_code.tools.base import Access, AccessDetails, ToolContext, ToolError
from iac_code.tools.provider_schema import ProviderSchemaTool

SMALL = {
    "format_version": "1.0",
    "provider_schemas": {
        PROVIDER: {
            "resource_schemas": {
                "huge_bucket": {"block": {"attributes": {"name": {"type": "string", "required": True}}}},
                "huge_bucket_policy": {"block": {"attributes": {"policy": {"type": "string", "required": True}}}},
            },
            "data_source_schemas": {
                "huge_zone": {"block": {"attributes": {"id": {"type": "string", "computed": True}}}}
            },
        }
    },
}


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake terraform first on PATH; the file it appends a line to per `providers schema` run."""
    document = tmp_path / "schema.json"
    document.write_text(json.dumps(SMALL))
    log = tmp_path / "runs.log"
    log.touch()
    fake_terraform(tmp_path / "bin", document, log)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return log


@pytest.fixture
def module(workspace: Path) -> Path:
    return initialized_module(workspace / "mod")


def run_count(log: Path) -> int:
    return len(log.read_text().splitlines())


async def test_a_type_is_answered_from_the_cache_once_stored(runs, module, workspace, tmp_path):
    cache = tmp_path / "cache" / "schemas.sqlite"
    ctx = ToolContext(workspace)
    result = await ProviderSchemaTool(cache).run({"type": "huge_bucket", "path": "mod"}, ctx)
    assert (result.raw_output["provider"], result.raw_output["version"]) == (PROVIDER, PINNED)
    assert result.text.startswith(f'resource "huge_bucket": {PROVIDER} {PINNED}\nattributes:\n  name: string, required')
    assert run_count(runs) == 1
    later = ProviderSchemaTool(cache)  # a later session: the same file, nothing in memory
    data = await later.run({"type": "huge_zone", "kind": "data", "path": "mod"}, ctx)
    assert data.raw_output["kind"] == "data" and data.raw_output["attributes"][0]["computed"]
    assert run_count(runs) == 1
    (module / ".terraform.lock.hcl").write_text((module / ".terraform.lock.hcl").read_text() + "\n")
    await later.run({"type": "huge_bucket", "path": "mod"}, ctx)
    assert run_count(runs) == 2  # another lock file, another document


async def test_an_unknown_type_gets_the_closest_names_of_its_kind(runs, module, workspace):
    tool, ctx = ProviderSchemaTool(None), ToolContext(workspace)
    with pytest.raises(ToolError) as missing:
        await tool.run({"type": "huge_bucketz", "path": "mod"}, ctx)
    assert str(missing.value) == (
        f'No resource type "huge_bucketz" in the providers of {module.resolve()} '
        f"({PROVIDER} {PINNED}, terraform.io/builtin/terraform {BINARY_VERSION}). Closest resource types: huge_bucket, huge_bucket_policy."
    )
    with pytest.raises(
        ToolError, match='"huge_zone" is a data source, not a resource type: ask again with kind "data"'
    ):
        await tool.run({"type": "huge_zone", "path": "mod"}, ctx)
    with pytest.raises(ToolError, match="Is its provider in required_providers"):
        await tool.run({"type": "nothing_like_it", "kind": "data", "path": "mod"}, ctx)
    assert run_count(runs) == 1


async def test_plugins_in_dot_terraform_are_asked_about_before_they_start(runs, module, workspace):
    plugin = module / ".terraform" / "providers" / "registry.terraform.io" / "example" / "huge"
    plugin.mkdir(parents=True)
    asked: list[tuple[str, Access, str]] = []

    async def refuse(subject: str, access: Access, question: str, details: AccessDetails | None = None) -> str:
        asked.append((subject, access, question))
        return "refused by the user"

    with pytest.raises(ToolError, match=r"No schema: refused by the user \(terraform would start the provider"):
        await ProviderSchemaTool(None).run(
            {"type": "huge_bucket", "path": "mod"}, ToolContext(workspace, request_access=refuse)
        )
    assert asked == [
        (
            "provider_schema:providers",
            "workspace_code",
            "provider_schema wants to run terraform providers schema, which starts the provider plugins in mod/.terraform",
        )
    ]
    assert run_count(runs) == 0


async def test_a_module_terraform_must_not_be_handed_is_refused(runs, module, workspace):
    os.mkfifo(module / "pipe.tf")  # terraform would wait on it until the timeout
    with pytest.raises(ToolError, match=r"Not run: .* must not be handed: pipe.tf \(a FIFO"):
        await ProviderSchemaTool(None).run({"type": "huge_bucket", "path": "mod"}, ToolContext(workspace))
    assert run_count(runs) == 0


async def test_not_initialized(runs, workspace):
    ctx = ToolContext(workspace)
    locked = workspace / "locked"
    initialized_module(locked)
    (locked / ".terraform").rmdir()
    with pytest.raises(ToolError) as no_data_dir:
        await ProviderSchemaTool(None).run({"type": "huge_bucket", "path": "locked"}, ctx)
    assert str(no_data_dir.value).startswith(
        f"{locked.resolve()} is not initialized (it has .terraform.lock.hcl but no .terraform/): run `terraform init`"
    )
    unlocked = workspace / "unlocked"
    unlocked.mkdir()
    (unlocked / "main.tf").write_text('resource "huge_bucket" "b" {}\n')
    with pytest.raises(ToolError, match=r'no \.terraform\.lock\.hcl, and "huge_bucket" is not a built-in type'):
        await ProviderSchemaTool(None).run({"type": "huge_bucket", "path": "unlocked"}, ctx)
    builtin = await ProviderSchemaTool(None).run({"type": "terraform_data", "path": "unlocked"}, ctx)
    assert builtin.raw_output["version"] == BINARY_VERSION  # the binary's own provider needs no init
    assert run_count(runs) == 0


async def test_a_stale_lock_file_is_reported_as_not_initialized(workspace, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "terraform"
    script.write_text(
        '#!/bin/sh\n[ "$1" = version ] && { echo \'{"terraform_version": "1.9.0"}\'; exit 0; }\n'
        "echo '│ Error: Required plugins are not installed' >&2\necho '│   terraform init' >&2\nexit 1\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    module = initialized_module(workspace / "mod")
    with pytest.raises(ToolError) as stale:
        await ProviderSchemaTool(None).run({"type": "huge_bucket", "path": "mod"}, ToolContext(workspace))
    message = str(stale.value)
    assert message.startswith(f"{module.resolve()} is not initialized (terraform providers schema failed in")
    assert "Required plugins are not installed" in message and "then ask again." in message


async def test_no_terraform_on_path(workspace, tmp_path, monkeypatch):
    initialized_module(workspace / "mod")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    with pytest.raises(ToolError, match="Neither terraform nor tofu is on PATH"):
        await ProviderSchemaTool(None).run({"type": "huge_bucket", "path": "mod"}, ToolContext(workspace))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "'type' is required"),
        ({"type": "  "}, "'type' is required"),
        ({"type": "x", "kind": "module"}, "'kind' must be"),
        ({"type": "x", "path": "../"}, "outside the workspace"),
        ({"type": "x", "path": "/etc"}, "outside the workspace"),
        ({"type": "x", "path": "mod/main.tf"}, "not a directory: mod/main.tf"),
        ({"type": "x", "path": "empty"}, r"No Terraform configuration \(.tf files\)"),
    ],
)
async def test_bad_arguments(workspace: Path, args: dict[str, Any], message: str) -> None:
    initialized_module(workspace / "mod")
    (workspace / "empty").mkdir()
    with pytest.raises(ToolError, match=message):
        await ProviderSchemaTool(None).run(args, ToolContext(workspace))


def test_title_and_access() -> None:
    tool = ProviderSchemaTool(None)
    assert tool.title({"type": "aws_ami", "kind": "data"}) == "Schema of data source aws_ami"
    assert tool.title({"type": "aws_instance"}) == "Schema of resource aws_instance"
    assert tool.access({"type": "aws_instance"}) == "read"


async def test_calls_at_once_share_one_terraform_run(runs, module, workspace, tmp_path):
    cache = tmp_path / "schemas.sqlite"
    calls = [
        ProviderSchemaTool(cache).run({"type": name, "path": "mod"}, ToolContext(workspace))
        for name in ("huge_bucket", "huge_bucket_policy", "huge_bucket")
    ]
    results = await asyncio.gather(*calls)
    assert [r.raw_output["type"] for r in results] == ["huge_bucket", "huge_bucket_policy", "huge_bucket"]
    assert run_count(runs) == 1


async def test_a_terraform_that_cannot_say_its_version_is_a_clear_error(workspace, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "terraform").write_text("#!/bin/sh\necho 'broken install' >&2\nexit 2\n")
    (bin_dir / "terraform").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    initialized_module(workspace / "mod")
    with pytest.raises(ToolError, match="terraform version -json failed: broken install"):
        await ProviderSchemaTool(None).run({"type": "huge_bucket", "path": "mod"}, ToolContext(workspace))
