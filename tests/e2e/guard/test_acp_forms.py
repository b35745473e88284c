"""Every form of the table through the real bash tool over ACP, in `bypass-permissions`: a change is asked
exactly once (one `session/request_permission`, whichever of the visible rule and the shims catches it)
and runs only when allowed; what changes nothing runs without a question. One agent process, one
session, one prompt per row and answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.e2e.acp.wire import Agents, select
from tests.e2e.guard.conftest import skip_unless_guardable
from tests.e2e.guard.forms import CHANGES, FORMS, NO_CHANGES, Form, agent_path, changes_logged
from tests.e2e.guard.test_headless_forms import row_line


@pytest.fixture(scope="module")
def bypassing(model, bin_dir, tmp_path_factory) -> Iterator[tuple[object, str, object]]:
    """(the agent, its one session in bypass-permissions, the session's workspace)."""
    workspace = tmp_path_factory.mktemp("acp-forms")
    agents = Agents(model.url, tmp_path_factory.mktemp("config"))
    agent = agents.start(PATH=agent_path(bin_dir))
    session_id = agent.new_session(workspace)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "bypass-permissions"})
    yield agent, session_id, workspace
    agents.close_all()


def _run_row(bypassing, model, bin_dir, form: Form, answer: str, log_name: str):
    agent, session_id, workspace = bypassing
    line = row_line(form, workspace, bin_dir).replace(f"{form.id}.log", log_name)
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": line}}]}, {"text": "done"})
    asked: list[dict] = []

    def answer_with(request):
        asked.append(request)
        return select(answer)(request)

    response, _ = agent.prompt(session_id, f"run {form.id}", answer_with)
    assert response["result"]["stopReason"] == "end_turn"
    return asked, workspace / log_name


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
@pytest.mark.parametrize("form", CHANGES, ids=[form.id for form in CHANGES])
def test_a_change_is_asked_once_and_runs_only_when_allowed(bypassing, model, bin_dir, namespaces_here, form, answer):
    skip_unless_guardable(form, namespaces_here)
    asked, log = _run_row(bypassing, model, bin_dir, form, answer, f"{form.id}-{answer}.log")
    assert len(asked) == 1, [request["params"]["toolCall"]["title"] for request in asked]
    tool_call = asked[0]["params"]["toolCall"]
    assert tool_call["title"].startswith("Infrastructure change: ")
    assert not tool_call["title"].startswith("Infrastructure change: Infrastructure change")
    assert tool_call["rawInput"]["infrastructureChange"] is True
    assert [option["kind"] for option in asked[0]["params"]["options"]] == ["allow_once", "reject_once"]
    expected = [list(form.change)] if answer == "allow_once" else []
    assert changes_logged(log) == expected


@pytest.mark.parametrize("form", NO_CHANGES, ids=[form.id for form in NO_CHANGES])
def test_what_changes_nothing_runs_unasked(bypassing, model, bin_dir, form):
    asked, log = _run_row(bypassing, model, bin_dir, form, "reject_once", f"{form.id}.log")
    assert asked == []
    assert log.exists()


def test_the_table_has_one_row_per_id():
    assert len({form.id for form in FORMS}) == len(FORMS)


def test_two_hidden_changes_at_once_are_asked_one_after_the_other(bypassing, model):
    agent, session_id, workspace = bypassing
    # Computed by a program the line rule does not read (rev), so only the shims can see them.
    hidden_apply, hidden_delete = "$(echo ylppa mrofarret | rev)", "$(echo dorp ecapseman eteled ltcebuk | rev)"
    line = f'export STAND_IN_LOG="$PWD/two.log"\n{hidden_apply} & {hidden_delete} & wait'
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": line}}]}, {"text": "done"})
    titles: list[str] = []

    def allow_terraform_only(request):
        titles.append(title := request["params"]["toolCall"]["title"])
        return select("allow_once" if "terraform" in title else "reject_once")(request)

    response, _ = agent.prompt(session_id, "both", allow_terraform_only)
    assert response["result"]["stopReason"] == "end_turn"
    assert sorted(titles) == [
        "Infrastructure change: kubectl delete namespace prod",
        "Infrastructure change: terraform apply",
    ]
    assert changes_logged(workspace / "two.log") == [["terraform", "apply"]]
