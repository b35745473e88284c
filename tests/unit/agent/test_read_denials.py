"""The paths a session's Read deny rules name, expanded as they exist now (agent/read_denials.py): inside and
outside the workspace, `~`, a trailing `/`, a folder covering what is under it; other rules name nothing."""

from __future__ import annotations

from pathlib import Path

from iac_code.agent.read_denials import denied_read_paths
from iac_code.agent.rules import load_rules
from iac_code.repository import project_directories


def rules_for(workspace: Path, config: Path, deny: list[str]):
    return load_rules(project_directories(workspace), {"deny": deny, "allow": ["Read(public/**)"]}, None, config)


def test_read_deny_rules_expand_to_the_existing_paths(tmp_path, monkeypatch):
    workspace, config, home = tmp_path / "ws", tmp_path / "config", tmp_path / "home"
    for folder in (workspace / "secrets" / "deep", workspace / "public", tmp_path / "vault", home / ".ssh"):
        folder.mkdir(parents=True)
    (workspace / "secrets" / "deep" / "a.key").write_text("x")
    (workspace / "main.tf").write_text("")
    (workspace / "prod.tfvars").write_text("")
    (workspace / "public" / "prod.tfvars").write_text("")
    (tmp_path / "vault" / "token").write_text("x")
    (home / ".ssh" / "id_ed25519").write_text("x")
    monkeypatch.setenv("HOME", str(home))
    deny = [
        "Read(secrets/)",
        "Read(*.tfvars)",
        "Read(../vault/**)",
        "Read(~/.ssh/id_*)",
        "Read(nothing/**)",
        "Bash(rm *)",
    ]
    found = denied_read_paths(rules_for(workspace, config, deny))
    assert found == sorted(
        str(path.resolve())
        for path in (workspace / "secrets", workspace / "prod.tfvars", tmp_path / "vault", home / ".ssh" / "id_ed25519")
    )


def test_no_read_deny_rule_names_nothing(tmp_path):
    (tmp_path / "ws").mkdir()
    assert denied_read_paths(rules_for(tmp_path / "ws", tmp_path / "config", ["Write(*.tf)"])) == []
