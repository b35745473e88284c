"""How fast does provider_schema answer for a big provider?

A generated ~50 MB `providers schema -json` document (tests/fakes/provider_schemas.py: 1,400 resource types
and 450 data sources, 60 attributes and two levels of nested blocks each) is served by a fake `terraform`
on PATH for an initialized module. Three figures, medians:

- cold: an empty cache; terraform runs, the document is parsed and stored one row per type;
- warm: the same tool asked for other types (goal ≤ 50 ms: the cache must not re-parse the document);
- warm, reopened: a new tool and store on the same cache file each time, as a later session or process.

    .venv/bin/python bench/provider_schema.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fakes.provider_schemas import fake_terraform, initialized_module, write_large_schema

from iac_code.tools.base import ToolContext
from iac_code.tools.provider_schema import ProviderSchemaTool


async def timed(tool: ProviderSchemaTool, ctx: ToolContext, args: dict[str, str]) -> float:
    start = time.perf_counter()
    result = await tool.run(args, ctx)
    elapsed = time.perf_counter() - start
    assert result.raw_output["type"] == args["type"], result.text
    return elapsed


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-provider-schema-") as scratch:
        root = Path(scratch)
        document = write_large_schema(root / "schema.json")
        fake_terraform(root / "bin", document, root / "runs.log")
        os.environ["PATH"] = f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        workspace = root / "work"
        initialized_module(workspace / "big")
        ctx = ToolContext(workspace)
        print(f"document: {document.stat().st_size / 1e6:.1f} MB")

        cold = []
        for run in range(runs):
            tool = ProviderSchemaTool(root / f"cold-{run}.sqlite")
            cold.append(await timed(tool, ctx, {"type": "huge_thing_0001", "path": "big"}))
        print(f"cold (terraform runs, document parsed and stored): median {statistics.median(cold) * 1000:.0f} ms")

        cache = root / "cold-0.sqlite"
        tool = ProviderSchemaTool(cache)
        warm = [await timed(tool, ctx, {"type": f"huge_thing_{n * 37:04d}", "path": "big"}) for n in range(runs * 4)]
        print(f"warm (same tool): median {statistics.median(warm) * 1000:.1f} ms, max {max(warm) * 1000:.1f} ms")

        reopened = []
        for n in range(runs * 4):
            args = {"type": f"huge_lookup_{n * 11:04d}", "kind": "data", "path": "big"}
            reopened.append(await timed(ProviderSchemaTool(cache), ctx, args))
        print(
            f"warm (a new tool and store each call): median {statistics.median(reopened) * 1000:.1f} ms, "
            f"max {max(reopened) * 1000:.1f} ms"
        )
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS of this process: {peak:.0f} MB (generating the document and the cold runs)")
        print(
            f"terraform providers schema runs: {len((root / 'runs.log').read_text().splitlines())} (one per cold run)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    asyncio.run(main(parser.parse_args().runs))
