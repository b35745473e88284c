"""The editor's terminal on the agent's machine is guarded too: the command it is asked to run starts under
the agent's reaper, with the guard's PATH, channel and mount plan, so a change built at run time is asked
once, a cancelled question ends the turn, and the credential files show empty there as in the agent's own
commands."""

from __future__ import annotations

import pytest
from tests.e2e.acp.editor import Editor, editing
from tests.e2e.guard.conftest import namespace_support
from tests.e2e.guard.forms import agent_path, changes_logged

from iac_code.guard.shim import GUARD_SOCKET, GUARD_TOKEN
from iac_code.system.reaper import MOUNT_PLAN_VARIABLE

# `terraform apply`, computed by a program the line rule does not read (rev): only the shim sees it.
HIDDEN_APPLY = 'export STAND_IN_LOG="$PWD/ran.log"\nterraform plan; $(echo ylppa mrofarret | rev)'


async def _bash_in_bypass_mode(model, workspace, bin_dir, tmp_path, answer):
    editor = Editor(answer=answer)
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": HIDDEN_APPLY}}]}, {"text": "done"})
    async with editing(editor, model.url, tmp_path / "config", PATH=agent_path(bin_dir)) as conn:
        session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=session_id, mode_id="bypass-permissions")
        response = await conn.prompt(session_id=session_id, prompt=[{"type": "text", "text": "go"}])
    return editor, response


async def test_a_change_in_the_editors_terminal_is_asked_once(model, workspace, bin_dir, tmp_path):
    editor, response = await _bash_in_bypass_mode(
        model, workspace, bin_dir, tmp_path, lambda tool_call, options: "reject_once"
    )
    assert response.stop_reason == "end_turn"
    (created,) = editor.created
    assert GUARD_SOCKET in created["env"] and GUARD_TOKEN in created["env"]
    assert MOUNT_PLAN_VARIABLE in created["env"] or not namespace_support().usable
    (question,) = editor.permissions
    assert question.title == "Infrastructure change: terraform apply"
    assert question.raw_input["infrastructureChange"] is True
    assert (workspace / "ran.log").read_text() == "terraform plan\n"


async def test_cancelling_the_shims_question_ends_the_turn_and_nothing_changes(model, workspace, bin_dir, tmp_path):
    editor, response = await _bash_in_bypass_mode(model, workspace, bin_dir, tmp_path, lambda tool_call, options: None)
    assert response.stop_reason == "cancelled"
    assert len(editor.permissions) == 1
    assert changes_logged(workspace / "ran.log") == []


@pytest.mark.skipif(not namespace_support().usable, reason="no mount namespaces here")
async def test_the_editors_terminal_shows_the_credential_files_empty(model, workspace, tmp_path):
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = file-secret-in-the-home\n")
    line = f"ls -a {home}/.aws; cat {home}/.aws/credentials; echo listed"
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": line}}]}, {"text": "done"})
    editor = Editor(answer=lambda tool_call, options: "allow_once")
    async with editing(editor, model.url, tmp_path / "config", HOME=str(home)) as conn:
        session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=session_id, mode_id="bypass-permissions")
        await conn.prompt(session_id=session_id, prompt=[{"type": "text", "text": "go"}])
    assert len(editor.created) == 1, "the command ran in the editor's terminal"
    tool_results = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert "listed" in tool_results[0] and "file-secret-in-the-home" not in tool_results[0], tool_results
