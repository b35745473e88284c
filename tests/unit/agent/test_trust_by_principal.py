"""Project trust on a shared server is each principal's own: bob's `/permissions trust` is not alice's, nor the
local user's, and the local user's file keeps its form."""

from __future__ import annotations

import json
from pathlib import Path

from iac_code.agent.rules import PRINCIPALS_TRUST_FILE, TRUST_FILE, load_rules, remember_trust, remembered_trusted
from iac_code.principals import LOCAL, Principal
from iac_code.repository import project_directories

ALICE, BOB, ROOT = Principal("alice"), Principal("bob"), Principal("root", admin=True)


def project(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".iac-code").mkdir()
    (repo / ".iac-code" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(*)"]}}))
    return repo


def test_one_principals_trust_is_not_anothers(tmp_path: Path) -> None:
    repo, config = project(tmp_path), tmp_path / "config"
    remember_trust(config, repo, BOB)
    assert load_rules(project_directories(repo), None, None, config, principal=BOB).trusted
    for other in (ALICE, ROOT, LOCAL):
        assert not load_rules(project_directories(repo), None, None, config, principal=other).trusted, other.name
    assert not (config / TRUST_FILE).exists()  # the local user's file is not touched
    assert json.loads((config / PRINCIPALS_TRUST_FILE).read_text()) == {"principals": {"bob": [str(repo.resolve())]}}


def test_the_local_users_trust_stays_in_its_own_file_and_holds_no_principal(tmp_path: Path) -> None:
    repo, config = project(tmp_path), tmp_path / "config"
    remember_trust(config, repo)
    assert json.loads((config / TRUST_FILE).read_text()) == {"projects": [str(repo.resolve())]}
    assert load_rules(project_directories(repo), None, None, config).trusted
    assert not load_rules(project_directories(repo), None, None, config, principal=ALICE).trusted
    remember_trust(config, repo, ALICE)
    remember_trust(config, repo, BOB)
    remember_trust(config, repo, ALICE)  # once is enough
    assert remembered_trusted(config, ALICE) == remembered_trusted(config, BOB) == [repo.resolve()]
    assert json.loads((config / TRUST_FILE).read_text()) == {"projects": [str(repo.resolve())]}
