"""The agent's own state (system/own_state.py) inside a workspace, as a session opened in $HOME sees it: the file
tools refuse it by name, whatever path leads there (relative, absolute, a link); list_files, grep, glob and
iac_check's walk leave it out without a word; the tokens file counts wherever it is configured."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from iac_code.config import Settings
from iac_code.iac.walk import list_candidate_files
from iac_code.system.own_state import keep_out, keep_out_paths
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.files import EditFileTool, ListFilesTool, ReadFileTool, WriteFileTool
from iac_code.tools.search import GlobTool, GrepTool

SECRET = "zz-own-state-zz"


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    config = home / ".iac-code"
    config.mkdir(parents=True)
    (config / "tokens.json").write_text(f'{{"tokens": "{SECRET}"}}\n')
    (config / "iac-code.db").write_bytes(SECRET.encode())
    (config / "config.json").write_text(f'{{"x": "{SECRET}"}}\n')
    (home / "main.tf").write_text(f"# {SECRET}\n")
    (home / "link.json").symlink_to(".iac-code/tokens.json")
    elsewhere = tmp_path / "tokens-elsewhere.json"
    elsewhere.write_text("{}")
    keep_out(Settings(config_dir=config, tokens_file=str(elsewhere)))
    yield home
    keep_out_paths(())


@pytest.mark.parametrize("path", [".iac-code/tokens.json", ".iac-code/iac-code.db", ".iac-code", "link.json"])
async def test_the_file_tools_refuse_it_by_name(home: Path, path: str) -> None:
    ctx = ToolContext(home)
    for tool, args in [
        (ReadFileTool(), {"path": path}),
        (ReadFileTool(), {"path": str(home / path)}),
        (WriteFileTool(), {"path": path, "content": "{}"}),
        (EditFileTool(), {"path": path, "old_string": SECRET, "new_string": "x"}),
        (GrepTool(), {"pattern": SECRET, "path": path}),
    ]:
        with pytest.raises(ToolError, match="iac-code's own state"):
            await tool.run(args, ctx)
    assert SECRET in (home / ".iac-code" / "tokens.json").read_text()


async def test_searches_and_listings_leave_it_out_without_a_word(home: Path) -> None:
    ctx = ToolContext(home)
    assert (await GrepTool().run({"pattern": SECRET}, ctx)).text == f"main.tf:1:# {SECRET}"
    assert (await GrepTool().run({"pattern": SECRET, "glob": "*"}, ctx)).text == f"main.tf:1:# {SECRET}"
    assert (await GlobTool().run({"pattern": "*.json"}, ctx)).text == "No files match '*.json'."
    listing = (await ListFilesTool().run({"depth": 3}, ctx)).text
    assert ".iac-code" not in listing and "main.tf" in listing
    assert list_candidate_files(home) == [home / "main.tf"]
    assert list_candidate_files(home / ".iac-code") == []


async def test_a_tokens_file_configured_elsewhere_is_kept_out_too(home: Path, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="iac-code's own state"):
        await ReadFileTool().run({"path": "tokens-elsewhere.json"}, ToolContext(tmp_path))
    (tmp_path / "other.json").write_text("{}")
    assert (await ReadFileTool().run({"path": "other.json"}, ToolContext(tmp_path))).text.endswith("{}")
