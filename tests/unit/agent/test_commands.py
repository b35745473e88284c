"""Prompt commands: /init and the user's Markdown commands, their descriptions, precedence and $ARGUMENTS."""

from pathlib import Path

import pytest

from iac_code.agent.commands import (
    INIT,
    MAX_COMMAND_FILE_BYTES,
    CustomCommand,
    load_commands,
    parse_invocation,
    render,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def dirs(tmp_path):
    workspace, config = tmp_path / "ws", tmp_path / "config"
    workspace.mkdir()
    config.mkdir()
    return workspace, config


def test_init_comes_first_and_asks_for_an_agents_md(dirs):
    workspace, config = dirs
    (command,) = load_commands(workspace, config)
    assert command is INIT
    prompt = render(INIT, "")
    assert "AGENTS.md" in prompt and "asked before anything is written" in prompt and "$ARGUMENTS" not in prompt
    assert render(INIT, "focus on the Kubernetes manifests").endswith("focus on the Kubernetes manifests")


def test_descriptions_come_from_front_matter_or_the_first_line(dirs):
    workspace, config = dirs
    write(
        workspace / ".iac-code/commands/plan-review.md",
        "---\ndescription: Review a terraform plan\nargument-hint: <plan file>\n---\nReview $ARGUMENTS carefully.\n",
    )
    write(config / "commands/tags.md", "\n# Check every resource has owner and env tags\n\nLook at $ARGUMENTS.")
    commands = {c.name: c for c in load_commands(workspace, config)}
    assert list(commands) == ["init", "plan-review", "tags"]
    review = commands["plan-review"]
    assert (review.description, review.hint, review.template) == (
        "Review a terraform plan",
        "<plan file>",
        "Review $ARGUMENTS carefully.\n",
    )
    assert commands["tags"].description == "Check every resource has owner and env tags"
    assert commands["tags"].source == config / "commands/tags.md"


def test_the_project_wins_over_the_user_and_the_session_commands_are_reserved(dirs):
    workspace, config = dirs
    write(config / "commands/deploy.md", "user version")
    write(workspace / ".iac-code/commands/deploy.md", "project version")
    write(workspace / ".iac-code/commands/clear.md", "would shadow /clear")
    commands = {c.name: c for c in load_commands(workspace, config, reserved={"clear", "compact", "help"})}
    assert commands["deploy"].template == "project version"
    assert "clear" not in commands


def test_bad_files_are_skipped(dirs):
    workspace, _ = dirs
    folder = workspace / ".iac-code/commands"
    write(folder / "has space.md", "bad name")
    write(folder / "huge.md", "x" * (MAX_COMMAND_FILE_BYTES + 1))
    write(folder / "notes.txt", "not markdown")
    (folder / "dir.md").mkdir()
    write(folder / "ok.md", "fine")
    assert [c.name for c in load_commands(workspace, None)] == ["init", "ok"]


@pytest.mark.parametrize(
    ("template", "arguments", "expected"),
    [
        ("Check $ARGUMENTS, then $ARGUMENTS again", " vpc.tf ", "Check vpc.tf, then vpc.tf again"),
        ("Check the modules", "network", "Check the modules\n\nnetwork"),
        ("Check the modules\n", "", "Check the modules"),
        ("Check $ARGUMENTS.", "", "Check ."),
    ],
)
def test_render_substitutes_or_appends_the_arguments(template, arguments, expected):
    assert render(CustomCommand("c", "d", template), arguments) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/init", ("init", "")),
        ("  /plan-review plans/prod.txt  ", ("plan-review", "plans/prod.txt")),
        ("/review\nthe network module\nand the DNS", ("review", "the network module\nand the DNS")),
        ("what does /init do?", None),
        ("/ nothing", None),
        ("/path/to/file", None),
    ],
)
def test_parse_invocation(text, expected):
    assert parse_invocation(text) == expected
