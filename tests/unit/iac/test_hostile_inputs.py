"""What iac_check reads and hands on when the repository is hostile: files swapped for symlinks, FIFOs and
devices beside Terraform files, files over the size cap, more files than the walk takes. Each is left out,
counted, and named in the output; no program is handed a directory holding one."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from tests.unit.iac.conftest import run_tool

from iac_code.iac import sources as sources_module
from iac_code.iac import walk
from iac_code.iac.checker import UNSAFE_DIRECTORY, Tree
from iac_code.iac.checkers.terraform import TerraformValidateChecker
from iac_code.iac.checkers.tflint import TflintChecker
from iac_code.iac.checkers.warm import CheckovChecker
from iac_code.iac.snapshot import snapshot
from iac_code.iac.sources import LeftOut, load_sources
from iac_code.iac.walk import list_candidate_files

GOOD_TF = 'resource "aws_s3_bucket" "logs" {\n  bucket = "logs"\n}\n'


def tree_of(workspace: Path) -> Tree:
    left_out = LeftOut()
    return Tree(workspace, load_sources(workspace, list_candidate_files(workspace), left_out), left_out)


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sources_module, "MAX_FILE_BYTES", 1000)
    return 1000


def swap_for_symlink(path: Path, target: Path) -> None:
    """A symlink to a regular file outside the workspace stands for /dev/zero here: following it is the
    regression, and reading it does not take the test process's memory."""
    target.write_text("secret = 1\n")
    path.unlink()
    path.symlink_to(target)


def test_a_file_swapped_for_a_symlink_after_the_walk_is_left_out_and_counted(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "main.tf").write_text(GOOD_TF)
    (tmp_path / "ws" / "zero.tf").write_text(GOOD_TF)
    listed = list_candidate_files(tmp_path / "ws")
    swap_for_symlink(tmp_path / "ws" / "zero.tf", tmp_path / "outside.tf")
    left_out = LeftOut()
    sources = load_sources(tmp_path / "ws", listed, left_out)
    assert [s.rel for s in sources] == ["main.tf"]
    assert left_out.unsafe == {"zero.tf": "a symbolic link (not followed)"}


def test_a_source_swapped_for_a_symlink_after_loading_is_refused_when_read(tmp_path: Path) -> None:
    (tmp_path / "ws" / "net").mkdir(parents=True)
    (tmp_path / "ws" / "net" / "main.tf").write_text(GOOD_TF)
    (source,) = load_sources(tmp_path / "ws", list_candidate_files(tmp_path / "ws"))
    assert source.text() == GOOD_TF
    swap_for_symlink(tmp_path / "ws" / "net" / "main.tf", tmp_path / "outside.tf")
    with pytest.raises(OSError, match="symbolic link"):
        source.text()


def test_a_file_over_the_size_cap_is_never_read(tmp_path: Path, small_cap: int) -> None:
    (tmp_path / "big.tf").write_text("#" * (small_cap + 1))
    os.chmod(tmp_path / "big.tf", 0)  # reading it would fail the test: only its size may be looked at
    left_out = LeftOut()
    assert load_sources(tmp_path, list_candidate_files(tmp_path), left_out) == []
    assert left_out.too_large == {"big.tf"}


@pytest.mark.parametrize(
    ("hostile", "name"),
    [
        ("fifo", "main.tf"),
        ("dev-zero", "main.tf"),
        ("dangling", "main.tf"),
        ("too-large", "main.tf"),
        ("fifo", "tests/main.tftest.hcl"),  # terraform validate loads the test files too
        ("fifo", ".terraform.lock.hcl"),
    ],
)
def test_a_terraform_directory_holding_a_hostile_file_is_handed_to_no_program(
    tmp_path: Path, small_cap: int, hostile: str, name: str
) -> None:
    for directory in ("net", "ok"):
        (tmp_path / directory / ".terraform").mkdir(parents=True)
        (tmp_path / directory / "tests").mkdir()
        (tmp_path / directory / "variables.tf").write_text(GOOD_TF)
    hostile_file = tmp_path / "net" / name
    if hostile == "fifo":
        os.mkfifo(hostile_file)
    elif hostile == "dev-zero":
        hostile_file.symlink_to("/dev/zero")
    elif hostile == "dangling":
        hostile_file.symlink_to("nowhere.tf")
    else:
        hostile_file.write_text("#" * (small_cap + 1))
    tree = tree_of(tmp_path)
    assert [u.rel for u in tree.terraform_dirs()] == ["ok"]
    assert [file for file, _ in tree.unsafe_terraform_dirs["net"]] == [f"net/{name}"]
    for checker in (TerraformValidateChecker(), TflintChecker(), CheckovChecker()):
        selection = checker.select(tree)
        assert "net" not in [u.rel for u in selection.units]
        assert ("net", UNSAFE_DIRECTORY) in selection.excluded


def test_a_hostile_file_in_a_downloaded_module_keeps_its_user_from_programs(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('module "vpc" {\n  source = "example/vpc/aws"\n}\n')
    (tmp_path / ".terraform" / "modules" / "vpc").mkdir(parents=True)
    (tmp_path / ".terraform" / "modules" / "modules.json").write_text(
        '{"Modules": [{"Key": "vpc", "Dir": ".terraform/modules/vpc"}, {"Key": "up", "Dir": "../outside"}]}'
    )
    (tmp_path / ".terraform" / "modules" / "vpc" / "zero.tf").symlink_to("/dev/zero")
    tree = tree_of(tmp_path)
    assert tree.terraform_dirs() == []
    assert tree.unsafe_terraform_dirs == {".": [(".terraform/modules/vpc/zero.tf", "a symbolic link to a device")]}


def test_a_hostile_file_in_a_local_module_keeps_its_user_from_programs(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "modules" / "net").mkdir(parents=True)
    (tmp_path / "root" / "main.tf").write_text('module "net" {\n  source = "../modules/net"\n}\n')
    os.mkfifo(tmp_path / "modules" / "net" / "main.tf")
    tree = tree_of(tmp_path)
    assert tree.terraform_dirs() == []
    assert tree.unsafe_terraform_dirs == {"root": [("modules/net/main.tf", "a FIFO (named pipe)")]}


def test_checkov_is_given_only_the_terraform_files_it_parses(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(GOOD_TF)
    (tmp_path / "prod.tfvars").write_text('name = "x"\n')
    tree = tree_of(tmp_path)
    (unit,) = tree.terraform_dirs()
    copies = tmp_path / "copies"
    payload = CheckovChecker().payload(tree, unit, copies)
    assert payload["framework"] == "terraform"
    assert payload["files"] == [[str(copies / "main.tf"), "main.tf"]]


def test_programs_are_given_copies_of_what_was_read_not_the_paths(tmp_path: Path) -> None:
    (tmp_path / "ws" / "net").mkdir(parents=True)
    (tmp_path / "ws" / "net" / "main.tf").write_text(GOOD_TF)
    (tmp_path / "ws" / "net" / "swapped.tf").write_text(GOOD_TF)
    sources = load_sources(tmp_path / "ws", list_candidate_files(tmp_path / "ws"))
    swap_for_symlink(tmp_path / "ws" / "net" / "swapped.tf", tmp_path / "outside.tf")

    async def copied() -> tuple[Path, list[str]]:
        async with snapshot(sources) as root:
            assert not root.is_relative_to(tmp_path / "ws")
            return root, sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())

    root, files = asyncio.run(copied())
    assert files == ["net/main.tf"]
    assert not root.exists()


def stand_in_terraform(directory: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `terraform` first on PATH that logs where it validates and answers at once (no FIFO is opened)."""
    directory.mkdir()
    script = directory / "terraform"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = version ]; then echo "Terraform v1.9.0"; exit 0; fi\n'
        f'echo "$PWD" >> "{directory}/validated.log"\n'
        'echo \'{"valid": true, "diagnostics": []}\'\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")
    return directory / "validated.log"


def test_the_tool_reports_the_fifo_as_a_finding_and_skips_its_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    validated = stand_in_terraform(tmp_path / "bin", monkeypatch)
    (tmp_path / "ws" / "net" / ".terraform").mkdir(parents=True)
    (tmp_path / "ws" / "net" / "variables.tf").write_text(GOOD_TF)
    os.mkfifo(tmp_path / "ws" / "net" / "main.tf")
    result = run_tool(tmp_path / "ws", {"checks": ["terraform-validate", "hcl-syntax"]})
    assert not validated.exists()
    (finding,) = [f for f in result.raw_output["findings"] if f["rule"] == "unsafe-file"]
    assert finding["file"] == "net/main.tf" and finding["severity"] == "warning"
    assert "a FIFO (named pipe)" in finding["message"] and "net" in finding["message"]
    assert result.raw_output["leftOut"] == {"unsafe": 1}
    assert "Left out: 1 file unsafe to read" in result.text
    assert all(location.path != str(tmp_path / "ws" / "net" / "main.tf") for location in result.locations)


def test_files_over_the_walk_limit_and_the_size_cap_are_counted_in_the_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_cap: int
) -> None:
    monkeypatch.setattr(walk, "MAX_FILES", 5)
    for index in range(8):
        (tmp_path / f"file{index}.tf").write_text(GOOD_TF)
    (tmp_path / "a_big.tf").write_text("#" * (small_cap + 1))  # sorted first: within the limit
    result = run_tool(tmp_path, {"checks": ["hcl-syntax"]})
    assert result.raw_output["files"] == 4
    assert result.raw_output["leftOut"] == {"overFileLimit": 4, "overSizeCap": 1}
    assert "Left out: 4 files beyond the walk's limit of 5 files" in result.text
    assert "1 file over the" in result.text


def test_a_clean_tree_keeps_the_output_contract(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(GOOD_TF)
    result = run_tool(tmp_path, {"checks": ["hcl-syntax"]})
    assert set(result.raw_output) == {"findings", "ran", "skipped", "files"}
    assert "Left out" not in result.text
