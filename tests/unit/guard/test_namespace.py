"""The reaper's mount plan: the shim covers the listed binary for the command alone, the original stays
reachable under the plan's real root, and a plan that cannot be carried out stops the command (exit 126)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from iac_code.guard.namespace import MountPlan, NamespaceSupport, coverable, probe_namespaces
from iac_code.system.processes import contained
from iac_code.system.reaper import GUARD_FAILED, MOUNT_PLAN_VARIABLE


def _namespaces_here() -> NamespaceSupport:
    with tempfile.TemporaryDirectory() as directory:
        return probe_namespaces(Path(directory))


NAMESPACES = _namespaces_here()
pytestmark = pytest.mark.skipif(not NAMESPACES.usable, reason="no mount namespaces here")
# Never run a command that kills its parent without a PID namespace around it: it would kill the test run.
needs_own_pids = pytest.mark.skipif(not NAMESPACES.own_pids, reason=f"no PID namespaces here: {NAMESPACES.why_no_pids}")


def _cat(paths: list[Path], plan: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, MOUNT_PLAN_VARIABLE: plan}
    return subprocess.run(contained("cat", *map(str, paths)), env=env, capture_output=True, text=True, timeout=30)


def test_the_binary_is_covered_for_the_command_only(tmp_path):
    binary, shim, real = tmp_path / "binary", tmp_path / "shim", tmp_path / "real"
    binary.write_text("real binary\n")
    shim.write_text("shim\n")
    real.mkdir()
    done = _cat([binary, Path(f"{real}{binary}")], MountPlan(str(shim), str(real), [str(binary)]).encode())
    assert done.returncode == 0, done.stderr
    assert done.stdout == "shim\nreal binary\n"
    assert binary.read_text() == "real binary\n", "the agent's own view is untouched"


def test_the_plan_variable_is_not_passed_on(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "binary").write_text("")
    plan = MountPlan(str(tmp_path / "binary"), str(tmp_path / "real"), [str(tmp_path / "binary")]).encode()
    env = {**os.environ, MOUNT_PLAN_VARIABLE: plan}
    done = subprocess.run(contained("env"), env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and MOUNT_PLAN_VARIABLE not in done.stdout


def test_a_plan_that_cannot_be_carried_out_stops_the_command(tmp_path):
    (tmp_path / "real").mkdir()
    marker = tmp_path / "ran"
    plan = MountPlan(
        str(tmp_path / "shim-that-is-not-there"), str(tmp_path / "real"), [str(tmp_path / "nothing")]
    ).encode()
    env = {**os.environ, MOUNT_PLAN_VARIABLE: plan}
    done = subprocess.run(contained("touch", str(marker)), env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == GUARD_FAILED
    assert "could not cover this command" in done.stderr
    assert not marker.exists()


def _run(command: list[str], plan: MountPlan) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, MOUNT_PLAN_VARIABLE: plan.encode()}
    return subprocess.run(contained(*command), env=env, capture_output=True, text=True, timeout=30)


def _plan(tmp_path: Path, *, hidden: tuple[Path, ...] = (), own_pids: bool = False) -> MountPlan:
    (tmp_path / "real").mkdir()
    (tmp_path / "shim").write_text("shim\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty-file").write_text("")
    return MountPlan(
        str(tmp_path / "shim"),
        str(tmp_path / "real"),
        [],
        hidden=[str(path) for path in hidden],
        empty_folder=str(tmp_path / "empty"),
        empty_file=str(tmp_path / "empty-file"),
        own_pids=own_pids,
    )


def test_credentials_show_empty_at_their_path_and_under_the_real_root(tmp_path):
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = SECRET\n")
    (home / ".terraformrc").write_text('credentials "app.terraform.io" { token = "SECRET" }\n')
    plan = _plan(tmp_path, hidden=(home / ".aws", home / ".terraformrc"))
    real = tmp_path / "real"
    look = (
        "import os, sys\n"
        "for folder in sys.argv[1:3]: print(sorted(os.listdir(folder)))\n"
        "for file in sys.argv[3:]: print(repr(open(file).read()))\n"
    )
    args = [f"{home}/.aws", f"{real}{home}/.aws", f"{home}/.terraformrc", f"{real}{home}/.terraformrc"]
    done = _run([sys.executable, "-c", look, *args], plan)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n[]\n''\n''\n"
    assert "SECRET" in (home / ".aws" / "credentials").read_text(), "the agent's own view is untouched"


@needs_own_pids
def test_in_its_own_pids_the_command_sees_only_its_namespace(tmp_path):
    plan = _plan(tmp_path, own_pids=True)
    outside = os.getpid()
    look = f"import os; print(os.getpid(), os.path.exists('/proc/{outside}'), os.path.exists('{tmp_path}/real/proc/{outside}'))"
    done = _run([sys.executable, "-c", look], plan)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "2 False False\n"


@needs_own_pids
def test_the_command_s_status_comes_back_through_the_init(tmp_path):
    plan = _plan(tmp_path, own_pids=True)
    assert _run(["sh", "-c", "exit 7"], plan).returncode == 7
    assert _run(["sh", "-c", "kill -TERM $$"], plan).returncode == -signal.SIGTERM
    assert _run(["no-such-program-here"], plan).returncode == 127


@needs_own_pids
@pytest.mark.parametrize(
    "escape", ["setsid -f sleep {marker}", "(sleep {marker} &) ; kill -9 $PPID", "( (setsid sleep {marker} &) & )"]
)
def test_nothing_the_command_started_outlives_it(tmp_path, escape):
    plan = _plan(tmp_path, own_pids=True)
    marker = f"{os.getpid() % 1000}.{len(escape)}31"  # a sleep this test alone starts: found by its argv
    done = _run(["bash", "-c", escape.format(marker=marker) + "; true"], plan)
    assert done.returncode in (0, -signal.SIGKILL), done.stderr
    assert not _processes_running(f"sleep\0{marker}\0"), "a process outlived its command's namespace"


def _processes_running(cmdline: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline") as file:
                    if file.read() == cmdline:
                        found.append(int(name))
            except OSError:
                continue
    return found


def test_a_masked_folder_shows_empty_but_for_the_paths_it_keeps(tmp_path):
    state = tmp_path / "config"
    (state / "plans" / "s1" / "apply-x").mkdir(parents=True)
    (state / "plans" / "s1" / "apply-x" / "p.tfplan").write_text("reviewed")
    (state / "plans" / "s1" / "other.tfplan").write_text("another plan")
    (state / "iac-code.db").write_text("SQLite format 3")
    kept_file = state / "plans" / "s1" / "new.tfplan"
    kept_file.write_text("")
    plan = _plan(tmp_path)
    plan = MountPlan(
        plan.shim,
        plan.real_root,
        [],
        empty_folder=plan.empty_folder,
        empty_file=plan.empty_file,
        masked=[str(state)],
        kept=[str(state / "plans" / "s1" / "apply-x"), str(kept_file)],
    )
    look = (
        "import os, sys\n"
        "root = sys.argv[1]\n"
        "print(sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs))\n"
        "print(open(os.path.join(root, 'plans/s1/apply-x/p.tfplan')).read())\n"
        "open(os.path.join(root, 'plans/s1/new.tfplan'), 'w').write('written')\n"
    )
    done = _run([sys.executable, "-c", look, str(state)], plan)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "['plans/s1/apply-x/p.tfplan', 'plans/s1/new.tfplan']\nreviewed\n"
    assert kept_file.read_text() == "written"  # a kept file is the real one: terraform's -out lands
    assert (state / "iac-code.db").read_text() == "SQLite format 3", "the agent's own view is untouched"


def test_coverable_paths_exist_and_neither_nest_nor_hold_the_guard(tmp_path):
    guard = tmp_path / "tmp" / "iacg-1"
    guard.mkdir(parents=True)
    (tmp_path / "a" / "b").mkdir(parents=True)
    paths = [str(tmp_path / "a" / "b"), str(tmp_path / "a"), str(tmp_path / "gone"), str(tmp_path / "tmp"), "rel"]
    assert coverable(paths, (), str(guard)) == [str(tmp_path / "a")]
    assert coverable([str(tmp_path / "a" / "b")], [str(tmp_path / "a")], str(guard)) == []
