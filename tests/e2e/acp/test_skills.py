"""Skills over ACP, through the real `iac-code acp` process and the scripted model: listed as commands and in
the system prompt, loaded by the model's `skill` call without a question (a reference leaving the skill's
folder refused), run as `/name request`, and a bad skill told to the client once."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.e2e.acp.wire import AgentProcess, answer_text, updates

from iac_code.skills.discovery import bundled_skills
from iac_code.skills.skill_file import Skill

pytestmark = pytest.mark.timeout(120)

BUNDLED = [skill.name for skill in bundled_skills() if isinstance(skill, Skill)]
TAGGING = """\
---
name: tagging
description: Our tagging rules. Use when adding or reviewing resources.
argument-hint: <module dir>
---
# Tagging
Every resource gets owner and cost-center tags.
"""


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / ".git").mkdir()
    folder = workspace / ".claude" / "skills" / "tagging"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(TAGGING)
    (folder / "references" / "owners.md").write_text("platform: the platform team\n")
    broken = workspace / ".agents" / "skills" / "broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    (workspace.parent / "secret.txt").write_text("top secret\n")
    return workspace


def _new_session(agent: AgentProcess, cwd: Path) -> tuple[str, list[dict]]:
    """session/new, then what the agent sends up to its command list and the warning that follows it."""
    session_id = agent.result("session/new", {"cwd": str(cwd), "mcpServers": []})["sessionId"]
    commands, _ = agent.until(lambda m: updates([m], "available_commands_update") != [])
    warning, _ = agent.until(lambda m: updates([m], "agent_message_chunk") != [])
    return session_id, [commands, warning]


def test_skills_are_commands_and_prompt_lines_and_a_bad_one_is_told_once(agent, model, project):
    session_id, (commands, warning) = _new_session(agent, project)
    listed = updates([commands])[0]["availableCommands"]
    by_name = {command["name"]: command for command in listed}
    assert [c["name"] for c in listed][-len(BUNDLED) - 1 :] == ["tagging", *BUNDLED]
    assert by_name["tagging"]["description"] == "Our tagging rules. Use when adding or reviewing resources."
    assert by_name["tagging"]["input"] == {"hint": "<module dir>"}
    assert "broken" not in by_name
    told = answer_text([warning])
    assert told.strip() == (
        f"[skills] skipped {project / '.agents' / 'skills' / 'broken' / 'SKILL.md'}: `description` is missing or empty"
    )

    model.add({"text": "noted"})
    response, seen = agent.prompt(session_id, "hello")
    assert response["result"]["stopReason"] == "end_turn"
    assert answer_text(seen) == "noted", "the warning is not repeated"
    system = model.requests[-1]["messages"][0]["content"]
    assert "- tagging: Our tagging rules. Use when adding or reviewing resources." in system
    assert system.index("- tagging:") < system.index("- plan-review:"), "the project's skills come first"
    assert "Every resource gets owner" not in system, "only names and descriptions are in the prompt"
    assert "skill" in [tool["function"]["name"] for tool in model.requests[-1]["tools"]]


def test_the_model_loads_a_skill_and_a_reference_without_a_question_and_cannot_leave_the_folder(agent, model, project):
    session_id, _ = _new_session(agent, project)
    model.add(
        {
            "tool_calls": [
                {"name": "skill", "arguments": {"name": "tagging"}},
                {"name": "skill", "arguments": {"name": "tagging", "reference": "references/owners.md"}},
                {"name": "skill", "arguments": {"name": "tagging", "reference": "../../../../secret.txt"}},
            ]
        },
        {"text": "tagged"},
    )
    response, seen = agent.prompt(session_id, "tag the bucket")  # no on_permission: a question would fail
    assert response["result"]["stopReason"] == "end_turn"
    starts = updates(seen, "tool_call")
    assert [(s["title"], s["kind"]) for s in starts] == [
        ("Load skill tagging", "read"),
        ("Read tagging/references/owners.md", "read"),
        ("Read tagging/../../../../secret.txt", "read"),
    ]
    results = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert results[0].startswith("# Tagging\nEvery resource gets owner and cost-center tags.\n\nSkill folder: ")
    assert results[0].endswith("- references/owners.md")
    assert results[1] == "     1\tplatform: the platform team"
    assert "leads outside the folder of skill 'tagging'; refused" in results[2]
    assert "top secret" not in str(seen) and "top secret" not in str(model.requests[-1])
    failed = [u for u in updates(seen, "tool_call_update") if u.get("status") == "failed"]
    assert [u["toolCallId"] for u in failed] == [starts[2]["toolCallId"]]


def test_a_skill_command_sends_the_skill_and_the_request_as_the_prompt(agent, model, project):
    session_id, _ = _new_session(agent, project)
    model.add({"text": "done"})
    response, seen = agent.prompt(session_id, "/tagging modules/vpc")
    assert response["result"]["stopReason"] == "end_turn" and answer_text(seen) == "done"
    sent = model.requests[-1]["messages"][-1]
    assert sent["role"] == "user"
    assert "Its instructions:\n\n# Tagging\nEvery resource gets owner and cost-center tags." in sent["content"]
    assert sent["content"].endswith("The user's request: modules/vpc")


def test_a_bundled_skill_runs_as_a_command_in_any_workspace(agent, model, workspace):
    session_id = agent.new_session(workspace)
    model.add({"text": "reviewed"})
    agent.prompt(session_id, "/plan-review envs/prod")
    sent = model.requests[-1]["messages"][-1]["content"]
    assert "# Reviewing a plan before apply" in sent and sent.endswith("The user's request: envs/prod")
