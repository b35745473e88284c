"""Where a session may be opened: never inside the agent's own state (any principal, the local user too), and on
a shared server under the roots the operator gave the principal."""

from __future__ import annotations

from pathlib import Path

import pytest

from iac_code.config import Settings
from iac_code.errors import InvalidParams
from iac_code.host.workspaces import admitted_directories, admitted_workspace, workspace_roots
from iac_code.principals import LOCAL, Principal

ALICE, BOB, ROOT, BOSS = Principal("alice"), Principal("bob"), Principal("root", admin=True), Principal("boss", True)


@pytest.fixture
def place(tmp_path: Path) -> Path:
    for directory in ("config/sessions", "secrets", "alice", "team/app", "elsewhere"):
        (tmp_path / directory).mkdir(parents=True)
    return tmp_path


def test_the_agents_own_state_is_never_a_workspace(place: Path) -> None:
    settings = Settings(config_dir=place / "config", tokens_file=str(place / "secrets" / "tokens.json"))
    for principal in (LOCAL, ALICE, ROOT):
        for cwd in (place / "config", place / "config" / "sessions", place / "secrets", place / "config/../config"):
            with pytest.raises(InvalidParams, match="inside the agent's own state") as refused:
                admitted_workspace(settings, principal, str(cwd))
            assert refused.value.field == "cwd"
        assert admitted_workspace(settings, principal, str(place)) == place.resolve()  # above it: the tools keep out


def test_a_link_into_the_config_dir_is_judged_where_it_leads(place: Path) -> None:
    (place / "elsewhere" / "link").symlink_to(place / "config")
    with pytest.raises(InvalidParams, match="agent's own state"):
        admitted_workspace(Settings(config_dir=place / "config"), LOCAL, str(place / "elsewhere" / "link"))


def test_principals_are_held_to_their_roots_and_admins_only_when_named(place: Path) -> None:
    roots = {"alice": (str(place / "alice"),), "boss": (str(place / "team"),), "*": (str(place / "team"),)}
    settings = Settings(config_dir=place / "config", workspace_roots=roots)
    allowed = [
        (ALICE, "alice"),
        (BOB, "team"),
        (BOB, "team/app"),
        (ROOT, "elsewhere"),
        (BOSS, "team/app"),
        (LOCAL, "elsewhere"),
    ]
    for principal, cwd in allowed:
        assert admitted_workspace(settings, principal, str(place / cwd)) == (place / cwd).resolve()
    for principal, cwd in [(ALICE, "team"), (BOB, "alice"), (BOB, "elsewhere"), (BOSS, "alice")]:
        with pytest.raises(InvalidParams, match=f"outside the workspaces {principal.name} may open"):
            admitted_workspace(settings, principal, str(place / cwd))


def test_without_roots_a_principal_may_open_any_directory(place: Path) -> None:
    assert workspace_roots(Settings(config_dir=place / "config"), BOB) is None
    assert workspace_roots(Settings(config_dir=place, workspace_roots={"alice": ()}), ALICE) == []


def test_additional_directories_are_admitted_as_the_cwd_is_each_refusal_naming_its_entry(place: Path) -> None:
    settings = Settings(config_dir=place / "config", workspace_roots={"alice": [str(place / "alice")]})
    (place / "alice" / "modules").mkdir()
    (place / "alice" / "file.txt").write_text("x")
    modules = str(place / "alice" / "modules")
    assert admitted_directories(settings, ALICE, [modules, str(place / "alice"), modules]) == (
        (place / "alice" / "modules").resolve(),
        (place / "alice").resolve(),
    )  # in order, a repeat once
    refusals = {
        "relative": ("modules", "not an absolute path: 'modules'"),
        "missing": (str(place / "alice" / "gone"), f"no such directory: {place / 'alice' / 'gone'}"),
        "a file": (str(place / "alice" / "file.txt"), f"no such directory: {place / 'alice' / 'file.txt'}"),
        "own state": (str(place / "config"), "inside the agent's own state"),
        "another's root": (str(place / "team"), "outside the workspaces alice may open"),
    }
    for bad, problem in refusals.values():
        with pytest.raises(InvalidParams) as refused:
            admitted_directories(settings, ALICE, [modules, bad])
        assert refused.value.field == "additionalDirectories[1]"
        assert problem in refused.value.data["additionalDirectories[1]"]
    assert admitted_directories(settings, LOCAL, [str(place / "team")]) == ((place / "team").resolve(),)
    with pytest.raises(InvalidParams, match="at most 32 directories"):
        admitted_directories(settings, LOCAL, [str(place / "team")] * 33)
