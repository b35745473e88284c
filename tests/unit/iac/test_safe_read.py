"""read_beneath and file_problem: what a hostile repository can put where a checker reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iac_code.iac.safe_read import UnsafeFile, file_problem, read_beneath


def test_reads_a_regular_file_in_a_subdirectory(tmp_path: Path) -> None:
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "main.tf").write_text('resource "x" "y" {}\n')
    assert read_beneath(tmp_path, "net/main.tf", 1024) == b'resource "x" "y" {}\n'


def test_refuses_a_symlink_to_dev_zero(tmp_path: Path) -> None:
    (tmp_path / "zero.tf").symlink_to("/dev/zero")
    with pytest.raises(UnsafeFile, match="symbolic link"):
        read_beneath(tmp_path, "zero.tf", 1024)
    assert file_problem(tmp_path / "zero.tf") == "a symbolic link to a device"


def test_refuses_a_directory_swapped_for_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "main.tf").write_text("secret")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "net").symlink_to(outside)
    with pytest.raises(UnsafeFile):
        read_beneath(workspace, "net/main.tf", 1024)


def test_a_fifo_neither_blocks_nor_is_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "main.tf")
    with pytest.raises(UnsafeFile, match="FIFO"):
        read_beneath(tmp_path, "main.tf", 1024)
    assert file_problem(tmp_path / "main.tf") == "a FIFO (named pipe)"


def test_the_size_cap_holds_on_the_descriptor(tmp_path: Path) -> None:
    (tmp_path / "big.tf").write_bytes(b"x" * 2048)
    with pytest.raises(UnsafeFile, match="larger than 1,024 bytes"):
        read_beneath(tmp_path, "big.tf", 1024)
    assert read_beneath(tmp_path, "big.tf", 2048) == b"x" * 2048


def test_paths_leaving_the_root_are_refused(tmp_path: Path) -> None:
    for rel in ("../x.tf", "/etc/passwd", ""):
        with pytest.raises(UnsafeFile):
            read_beneath(tmp_path, rel, 1024)


def test_a_missing_file_is_a_plain_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_beneath(tmp_path, "gone.tf", 1024)


def test_file_problem_accepts_regular_files_and_links_to_them(tmp_path: Path) -> None:
    (tmp_path / "a.tf").write_text("")
    (tmp_path / "b.tf").symlink_to(tmp_path / "a.tf")
    (tmp_path / "c.tf").symlink_to(tmp_path / "missing.tf")
    assert file_problem(tmp_path / "a.tf") is None
    assert file_problem(tmp_path / "b.tf") is None
    assert file_problem(tmp_path / "c.tf") == "a symbolic link that leads nowhere"
