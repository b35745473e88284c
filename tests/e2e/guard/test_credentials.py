"""Issue 36: the cloud credentials are the boundary. Through the real bash tool of `iac-code -p`, with
credentials in the agent's environment (AWS_SECRET_ACCESS_KEY, KUBECONFIG) and in files under its home
(~/.aws/credentials, ~/.kube/config):

- a hidden script finds none of them: not in its environment, not in the files by absolute path (also under
  the guard's view of the real file system), not in any /proc/*/environ or through /proc/*/root;
- an approved change of a guarded CLI runs with them (the agent runs it, on the command's output);
- a change that is not approved does not run, and sees nothing; nor does one that TF_CLI_ARGS hides;
- a known read-only form runs with them, without a question; a form not known to be read-only runs without;
- the real binary reached by another path (the guard's view of the real file system) runs without them;
- a daemon a command planted, with its parent killed, is gone when the call ends.

The stand-in CLIs record their argv and the credentials they saw, in the file STAND_IN_LOG names."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from tests.e2e.guard.conftest import namespace_support
from tests.e2e.headless_turn import bash_results

ENV_SECRET = "env-secret-4b1d7c0e9a"
FILE_SECRET = "file-secret-77e0c2d4f1"
KUBE_SECRET = "kube-secret-0d9a3e58b2"
SECRETS = (ENV_SECRET, FILE_SECRET, KUBE_SECRET)

# A guarded CLI's stand-in: records what it was run with and which credentials it could reach.
RECORDING_CLI = f"""#!/usr/bin/env python3
import json, os, sys
def read(path):
    try:
        return open(os.path.expanduser(path)).read()
    except OSError:
        return ""
seen = [name for name, where in (("env", os.environ.get("AWS_SECRET_ACCESS_KEY", "")),
        ("file", read("~/.aws/credentials")), ("kube", read(os.environ.get("KUBECONFIG", "~/.kube/config"))))
        if any(secret in where for secret in {SECRETS!r})]
with open(os.environ["STAND_IN_LOG"], "a") as log:
    log.write(json.dumps({{"argv": [os.path.basename(sys.argv[0]), *sys.argv[1:]], "saw": seen}}) + "\\n")
print("ran", *sys.argv[1:])
"""

# What a hostile script does to find credentials: every place it can reach.
HUNT = f"""python3 - <<'EOF'
import glob, os
secrets = {SECRETS!r}
found = set()
def look(path):
    try:
        data = open(path, "rb").read().decode(errors="replace")
    except OSError:
        return
    found.update(path for secret in secrets if secret in data)
for value in os.environ.values():
    found.update("environment" for secret in secrets if secret in value)
home = {{home!r}}
paths = [home + "/.aws/credentials", home + "/.kube/config"]
for path in list(paths):
    paths += glob.glob("/tmp/iacg-*/real" + path) + glob.glob("/proc/*/root" + path)
for path in paths + glob.glob("/proc/*/environ"):
    look(path)
print("FOUND", sorted(found) if found else "nothing")
EOF"""

APPROVED_CHANGE = "aws ec2 terminate-instances --instance-ids i-1"


def _cli(path: Path) -> None:
    path.write_text(RECORDING_CLI)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("home")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {FILE_SECRET}\n")
    (home / ".kube").mkdir()
    (home / ".kube" / "config").write_text(f"users:\n- user:\n    token: {KUBE_SECRET}\n")
    return home


@pytest.fixture(scope="module")
def clis(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("clis")
    for name in ("aws", "kubectl", "terraform"):
        _cli(directory / name)
    return directory


def _run(workspace: Path, home: Path, clis: Path, lines: list[str], flags: list[str]) -> list[str]:
    path = os.pathsep.join([str(clis), os.environ.get("PATH", os.defpath)])
    env_lines = [f'export STAND_IN_LOG="$PWD/{index}.log"\n{line}' for index, line in enumerate(lines)]
    credentials = {"AWS_SECRET_ACCESS_KEY": ENV_SECRET, "KUBECONFIG": str(home / ".kube" / "config")}
    config = workspace.parent / f"config-{workspace.name}"
    return bash_results(workspace, env_lines, flags, config, path, HOME=str(home), **credentials)


def _records(workspace: Path, index: int) -> list[dict[str, object]]:
    log = workspace / f"{index}.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture(scope="module")
def allowed(tmp_path_factory, home, clis) -> tuple[Path, list[str]]:
    workspace = tmp_path_factory.mktemp("allowed")
    lines = [
        HUNT.format(home=str(home)),
        APPROVED_CHANGE,
        f"sh -c '{APPROVED_CHANGE}'",
        # approved as a line, but the program is the real binary under the guard's view: no shim, no hand-over
        f"$(ls -d /tmp/iacg-*/real{clis}/aws | head -n 1) ec2 terminate-instances --instance-ids i-2",
    ]
    return workspace, _run(workspace, home, clis, lines, ["--yes", "--allow-infra-changes"])


@pytest.fixture(scope="module")
def denied(tmp_path_factory, home, clis) -> tuple[Path, list[str]]:
    workspace = tmp_path_factory.mktemp("denied")
    lines = [
        HUNT.format(home=str(home)),
        APPROVED_CHANGE,
        "kubectl delete namespace prod",
        "kubectl get pods",
        "kubectl get secrets",  # a read that hands out credentials: not a known read-only form
        'export TF_CLI_ARGS="destroy -auto-approve"; terraform',
    ]
    return workspace, _run(workspace, home, clis, lines, ["--yes"])


@pytest.mark.parametrize("mode", ["allowed", "denied"])
def test_a_hidden_script_finds_no_credential(request, mode):
    _, results = request.getfixturevalue(mode)
    assert "FOUND nothing" in results[0], results[0]


def test_an_approved_change_runs_with_the_credentials_on_the_command_s_output(allowed):
    workspace, results = allowed
    for index in (1, 2):  # the line's own command, and the same run from a shell in it (a shim's question)
        assert _records(workspace, index) == [
            {"argv": ["aws", "ec2", "terminate-instances", "--instance-ids", "i-1"], "saw": ["env", "file", "kube"]}
        ]
        assert "ran ec2 terminate-instances" in results[index], results[index]


def test_a_change_not_approved_runs_not_and_sees_nothing(denied):
    workspace, results = denied
    assert _records(workspace, 1) == [] and _records(workspace, 2) == []
    assert _records(workspace, 5) == [], results[5]  # terraform destroy, by TF_CLI_ARGS


def test_a_known_read_only_form_gets_the_credentials_and_another_does_not(denied):
    workspace, results = denied
    assert _records(workspace, 3) == [{"argv": ["kubectl", "get", "pods"], "saw": ["env", "file", "kube"]}]
    assert _records(workspace, 4) == [{"argv": ["kubectl", "get", "secrets"], "saw": []}], results[4]


@pytest.mark.skipif(not namespace_support().usable, reason="no mount namespaces here")
def test_the_real_binary_by_another_path_finds_nothing_to_act_with(allowed):
    workspace, results = allowed
    records = _records(workspace, 3)
    assert [record["saw"] for record in records] == [[]], results[3]


@pytest.mark.skipif(not namespace_support().own_pids, reason="no PID namespaces here")
def test_a_daemon_planted_with_its_parent_killed_is_gone_when_the_call_ends(tmp_path, home, clis):
    marker = f"{os.getpid()}.{len(str(tmp_path)) % 97}"
    _run(tmp_path, home, clis, [f"setsid -f sleep {marker}; (sleep {marker} &); kill -9 $PPID"], ["--yes"])
    alive = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{name}/cmdline").read_bytes() == f"sleep\0{marker}\0".encode():
                alive.append(name)
        except OSError:
            continue
    assert alive == []
