"""What does iac_plan add on top of terraform itself?

1. Summarising a 500-resource `show -json` document (the contract with its changed attributes, and the model's
   text): goal ≤ 0.2 s beyond terraform's own time.
2. The agent's overhead around `terraform plan` for a 20-resource module: `make_plan` (plan -out into a private
   file, show -json, the summary) against the same two terraform commands run directly.

Both modules use only the built-in terraform_data resource, so everything runs offline; each is applied once,
then edited so its plan creates, updates, replaces and destroys.

    .venv/bin/python bench/plan.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from iac_code.iac.plans.runner import PlanRequest, make_plan
from iac_code.iac.plans.store import PlanStore
from iac_code.iac.plans.summary import plan_contract, summary_text

ENVIRONMENT = {**os.environ, "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}


def module_text(count: int, generation: int) -> str:
    """`count` resources; generation 2 edits a quarter, replaces a quarter and drops a quarter of them."""
    blocks = []
    for n in range(count):
        kind = n % 4
        if generation == 2 and kind == 3:
            continue  # destroyed
        value = f"v{generation}" if generation == 2 and kind == 1 else "v1"
        trigger = generation if kind == 2 else 1
        blocks.append(
            f'resource "terraform_data" "r{n}" {{\n  input = {{ name = "r{n}", value = "{value}", tags = {{ a = "b" }} }}\n'
            f"  triggers_replace = [{trigger}]\n}}\n"
        )
    if generation == 2:
        blocks += [f'resource "terraform_data" "new{n}" {{ input = "{n}" }}\n' for n in range(count // 4)]
    return "".join(blocks)


def terraform(directory: Path, *args: str) -> str:
    done = subprocess.run(["terraform", *args], cwd=directory, env=ENVIRONMENT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"terraform {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout


def prepared_module(root: Path, count: int) -> Path:
    directory = root / f"m{count}"
    directory.mkdir()
    (directory / "main.tf").write_text(module_text(count, 1))
    terraform(directory, "init", "-input=false", "-no-color")
    terraform(directory, "apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=50")
    (directory / "main.tf").write_text(module_text(count, 2))
    return directory


def terraform_alone(directory: Path) -> tuple[float, str]:
    """Seconds for plan -out + show -json run directly, and the document."""
    start = time.perf_counter()
    terraform(directory, "plan", "-input=false", "-no-color", "-lock=false", "-out=direct.tfplan")
    document = terraform(directory, "show", "-json", "direct.tfplan")
    return time.perf_counter() - start, document


def through_iac_plan(directory: Path, store: PlanStore) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    plan = asyncio.run(make_plan(PlanRequest(directory), store))
    elapsed = time.perf_counter() - start
    store.discard(plan.plan_file)
    return elapsed, plan.contract


def summarise(document_text: str) -> float:
    start = time.perf_counter()
    contract = plan_contract(json.loads(document_text), tool="terraform", directory="d", plan_file="p", sha256="s")
    summary_text(contract)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = PlanStore(root / "plans")

        big = prepared_module(root, 500)
        _, document = terraform_alone(big)
        counts = plan_contract(json.loads(document), tool="t", directory="d", plan_file="p", sha256="s")["counts"]
        parse_and_summarise = statistics.median(summarise(document) for _ in range(args.runs * 4))
        print(f"500-resource show -json document: {len(document) / 1e6:.1f} MB, counts {counts}")
        print(f"  parse + contract + text: median {parse_and_summarise * 1000:.0f} ms (goal ≤ 200 ms)")

        small = prepared_module(root, 20)
        alone = statistics.median(terraform_alone(small)[0] for _ in range(args.runs))
        agent = statistics.median(through_iac_plan(small, store)[0] for _ in range(args.runs))
        print("20-resource module, plan -out + show -json:")
        print(f"  terraform alone: median {alone * 1000:.0f} ms")
        print(f"  make_plan (iac_plan's work): median {agent * 1000:.0f} ms, overhead {(agent - alone) * 1000:+.0f} ms")


if __name__ == "__main__":
    main()
