"""The infrastructure guard's cost (issue 19): what a shim adds to a call that changes nothing (goal ≤ 10 ms
over the real binary), and what the guard adds to a trivial bash tool call, `true` (goal ≤ +5 ms); and
(issue 36) what a run handed over with the cloud credentials adds: the agent runs the real binary under the
reaper on the shim's stdio (goal ≤ 15 ms over the real binary).

The "real binary" is a link named terraform to /bin/true, so the figures are the guard's alone. Each
variant runs in turn, N rounds, so that they share the machine's load alike; medians printed.
Run: .venv/bin/python bench/guard.py [N]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from iac_code.cloud_credentials import is_credential_variable
from iac_code.guard.calls import refuse_changes
from iac_code.guard.namespace import NamespaceSupport
from iac_code.guard.shims import Guard
from iac_code.system.own_state import keep_out_paths
from iac_code.system.processes import command_environment
from iac_code.tools.base import ToolContext
from iac_code.tools.local_shell import run_bash
from iac_code.tools.shell import BashTool


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _with_a_credential(run: Callable[[], object]) -> object:
    os.environ["AWS_SECRET_ACCESS_KEY"] = "bench-only-not-a-secret"
    try:
        return run()
    finally:
        del os.environ["AWS_SECRET_ACCESS_KEY"]


def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        bin_dir = Path(scratch) / "bin"
        bin_dir.mkdir()
        os.symlink("/bin/true", bin_dir / "terraform")
        os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
        path_only = Guard(NamespaceSupport(False, "left out to measure PATH shims alone"))
        with_namespace = Guard()
        plain = command_environment(guarded=False)
        shimmed = dict(plain)
        path_only.environment(shimmed, path_only.register(refuse_changes))
        namespaced = dict(plain)
        with_namespace.environment(namespaced, with_namespace.register(refuse_changes))
        # (issue 37) the agent's config dir masked by a tmpfs, one plan file kept in it, as iac_plan's terraform runs
        config = Path(scratch) / "config"
        (config / "plans" / "s").mkdir(parents=True)
        (config / "plans" / "s" / "p.tfplan").write_text("")
        keep_out_paths([config])
        masked = dict(plain)
        kept = [str(config / "plans" / "s" / "p.tfplan")]
        with_namespace.environment(masked, with_namespace.register(refuse_changes), kept=kept)
        # An approved change, handed over: every run allowed, and a credential to hand.
        handed = dict(plain)
        path_only.environment(handed, path_only.register(lambda request: None))
        # No credentials but the one the handed-over variant is given while it runs (the guard reads them live
        # when nothing was withheld): the other variants measure the shim running the program itself.
        os.environ["HOME"] = scratch
        for name in [name for name in os.environ if is_credential_variable(name)]:
            del os.environ[name]

        def terraform_plan(env: dict[str, str]) -> Callable[[], object]:
            return lambda: subprocess.run(["terraform", "plan"], env=env, check=True)

        def bash_true(env: dict[str, str]) -> Callable[[], object]:
            return lambda: asyncio.run(run_bash("true", Path(scratch), env, 30))

        def bash_tool_true() -> object:
            return asyncio.run(BashTool().run({"command": "true"}, ToolContext(Path(scratch))))

        python = os.path.realpath(sys.executable)
        variants: dict[str, Callable[[], object]] = {
            "the shim's floor: python -IS -c pass": lambda: subprocess.run([python, "-IS", "-c", "pass"], check=True),
            "terraform plan, the real binary": terraform_plan(plain),
            "terraform plan, through the PATH shim": terraform_plan(shimmed),
            "terraform apply, handed over with credentials": lambda: _with_a_credential(
                lambda: subprocess.run(["terraform", "apply"], env=handed, check=True)
            ),
            "bash `true`, no guard": bash_true(plain),
            "bash `true`, PATH shims": bash_true(shimmed),
            "bash `true`, PATH shims + mount namespace": bash_true(namespaced),
            "bash `true`, PATH shims + mount namespace + state masked": bash_true(masked),
            "bash tool call `true`, as the agent runs it": bash_tool_true,
        }
        if not with_namespace.namespaces.usable:
            print(f"no mount namespaces here: {with_namespace.namespaces.why_not}")
            del variants["bash `true`, PATH shims + mount namespace"]
            del variants["bash `true`, PATH shims + mount namespace + state masked"]
        samples: dict[str, list[float]] = {name: [] for name in variants}
        for run in variants.values():  # warm-up
            run()
        for _ in range(rounds):
            for name, run in variants.items():
                samples[name].append(_timed(run))
        path_only.close()
        with_namespace.close()
    print(f"medians of {rounds} runs (ms), {os.cpu_count()} CPUs, guard: {with_namespace.protection}")
    for name, values in samples.items():
        print(f"  {name:58} {_median_ms(values):7.2f}")
    shim_cost = _median_ms(samples["terraform plan, through the PATH shim"]) - _median_ms(
        samples["terraform plan, the real binary"]
    )
    print(f"a shim on a call that changes nothing: {shim_cost:+.2f} ms (goal ≤ 10 ms)")
    handed_cost = _median_ms(samples["terraform apply, handed over with credentials"]) - _median_ms(
        samples["terraform plan, the real binary"]
    )
    print(f"a run handed over with the credentials: {handed_cost:+.2f} ms (goal ≤ 15 ms)")
    base = _median_ms(samples["bash `true`, no guard"])
    for name in samples:
        if name.startswith("bash `true`, PATH"):
            print(
                f"{name.removeprefix('bash `true`, ')}: {_median_ms(samples[name]) - base:+.2f} ms on a bash call (goal ≤ 5 ms)"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
