"""How much do the grep and glob tools add on top of ripgrep itself?

Builds a 50,000-file IaC-like tree in a temporary directory (Terraform, YAML, JSON, Python, nested
modules, plus a .gitignore'd directory), then times each query end-to-end through the tool's async
`run` and through `rg` run directly with the same flags, and prints the medians and their ratio.

    .venv/bin/python bench/search.py [--files 50000] [--runs 7]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from iac_code.tools.base import ToolContext
from iac_code.tools.search import COMMON_FLAGS, GlobTool, GrepTool, ripgrep_path

TEMPLATES = {
    ".tf": 'resource "alicloud_vswitch" "vsw_{n}" {{\n  vpc_id     = var.vpc_id\n  cidr_block = "10.{a}.{b}.0/24"\n}}\n',
    ".yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-{n}\nspec:\n  replicas: {a}\n",
    ".json": '{{"Resources": {{"Bucket{n}": {{"Type": "ALIYUN::OSS::Bucket", "Properties": {{"Size": {a}}}}}}}}}\n',
    ".py": "def handler_{n}(event):\n    return {{'status': {a}, 'id': {b}}}\n",
}
NEEDLE = "needle_rare_marker"  # planted in one file in 1,000


def build_tree(root: Path, count: int) -> None:
    rng = random.Random(42)
    (root / ".gitignore").write_text("vendor/\n")
    suffixes = list(TEMPLATES)
    made: set[Path] = set()
    for n in range(count):
        suffix = suffixes[n % len(suffixes)]
        top = "vendor" if n % 20 == 0 else f"modules/m{n % 50}"  # 5% land in the ignored dir
        directory = root / top / f"d{(n // 50) % 40}"
        if directory not in made:
            directory.mkdir(parents=True, exist_ok=True)
            made.add(directory)
        text = TEMPLATES[suffix].format(n=n, a=rng.randrange(256), b=rng.randrange(256))
        if n % 1000 == 7:
            text += f"# {NEEDLE} {n}\n"
        (directory / f"f{n}{suffix}").write_text(text)


def run_tool(tool: Any, args: dict[str, Any], ctx: ToolContext) -> float:
    start = time.perf_counter()
    asyncio.run(tool.run(args, ctx))
    return time.perf_counter() - start


def run_rg(flags: list[str], cwd: Path) -> tuple[float, int]:
    start = time.perf_counter()
    out = subprocess.run([ripgrep_path(), *flags], cwd=cwd, capture_output=True, check=False).stdout
    return time.perf_counter() - start, out.count(b"\n")


def compare(tool: Any, args: dict[str, Any], flags: list[str], ctx: ToolContext, runs: int) -> tuple[float, float, int]:
    """Median ms of the tool and of rg, runs interleaved so that load changes hit both alike."""
    run_tool(tool, args, ctx)  # warm the page cache
    tool_samples, rg_samples, lines = [], [], 0
    for _ in range(runs):
        tool_samples.append(run_tool(tool, args, ctx))
        elapsed, lines = run_rg(flags, ctx.workspace)
        rg_samples.append(elapsed)
    return statistics.median(tool_samples) * 1000, statistics.median(rg_samples) * 1000, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        build_tree(root, options.files)
        print(f"tree: {options.files:,} files built in {time.perf_counter() - start:.1f} s; rg {ripgrep_path()}")
        ctx = ToolContext(workspace=root)
        preview = ["--max-columns=500", "--max-columns-preview"]
        content_flags = [*preview, "--line-number", "--with-filename", "--no-heading"]
        cases = [
            ("grep rare (content)", GrepTool(), {"pattern": NEEDLE}, [*COMMON_FLAGS, *content_flags, "--", NEEDLE]),
            (
                "grep files *.yaml",
                GrepTool(),
                # max_results above the match count, so the tool reads all that rg prints.
                {"pattern": "replicas: 1[0-9]$", "glob": "*.yaml", "output_mode": "files_with_matches",
                 "max_results": 2000},
                [*COMMON_FLAGS, *preview, "--files-with-matches", "--glob=*.yaml", "--", "replicas: 1[0-9]$"],
            ),
            (
                "glob **/*.tf (mtime sort)",
                GlobTool(),
                {"pattern": "**/*.tf"},
                ["--files", *COMMON_FLAGS, "--glob=**/*.tf", "--sortr=modified"],
            ),
        ]  # fmt: skip
        print(f"{'query':<28}{'tool ms':>10}{'rg ms':>10}{'ratio':>8}{'rg lines':>10}")
        for label, tool, args, flags in cases:
            tool_ms, rg_ms, lines = compare(tool, args, flags, ctx, options.runs)
            print(f"{label:<28}{tool_ms:>10.1f}{rg_ms:>10.1f}{tool_ms / rg_ms:>8.2f}{lines:>10,}")


if __name__ == "__main__":
    main()
