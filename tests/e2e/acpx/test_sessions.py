"""acpx's persistent sessions against `iac-code acp`: create, resume, follow-up, list, cancel, close.

`acpx sessions new` starts the agent, creates a session and exits. Each `acpx prompt` goes through a
background "queue owner" that, when none is running, starts the agent again and reattaches the
saved session with `session/resume`; the owner then stays up for `--ttl` idle seconds. Spawning
acpx and the agent costs seconds, so one scenario per module runs the whole story once and each
test checks one part of what it recorded:

  sessions new → prompt (owner 1, lives 1 s) → owner exits → prompt (owner 2, a new agent process
  resumes the session from disk) → sessions list → a prompt cancelled by `acpx cancel` → sessions close
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.e2e.acp.wire import answer_text, updates
from tests.e2e.acpx.client import AcpxRunner, Message, Run, only_request, requests, response_to
from tests.fakes.openai_server import ScriptedOpenAI

pytestmark = pytest.mark.timeout(600)

SHORT_TTL = "1"  # the first owner exits at once, so the next prompt needs a fresh agent process
# Long enough for the second owner to serve the rest of the scenario; short enough that an owner
# left behind by an interrupted run goes away by itself.
LONG_TTL = "20"


@dataclass
class Scenario:
    workspace: Path
    created: Run
    first: Run
    second: Run
    listed: Run
    long: Run
    cancel: Run
    model_requests: list[dict]


def _wait_for_model_requests(model: ScriptedOpenAI, count: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while len(model.requests) < count:
        assert time.monotonic() < deadline, f"the model got {len(model.requests)} of {count} requests"
        time.sleep(0.02)


def _wait_for_owner_exit(acpx: AcpxRunner, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while acpx.run("status").messages[0]["status"] == "alive":
        assert time.monotonic() < deadline, "acpx's queue owner outlived its --ttl"
        time.sleep(0.2)


def _finish(process: subprocess.Popen[str], timeout: float = 30) -> Run:
    stdout, stderr = process.communicate(timeout=timeout)
    return Run(process.returncode, stdout, stderr)


def _prompted_session(run: Run) -> str:
    return only_request(run.messages, "session/prompt")["params"]["sessionId"]


def _created_session(scenario: Scenario) -> str:
    (record,) = scenario.created.messages
    return record["acpxSessionId"]


def _resumed(run: Run) -> Message:
    """The session/resume request of a run that started a fresh agent process."""
    messages = run.messages
    only_request(messages, "initialize")
    resume = only_request(messages, "session/resume")
    assert "result" in response_to(messages, resume), response_to(messages, resume)
    assert requests(messages, "session/new") == []
    return resume


@pytest.fixture(scope="module")
def scenario(acpx_install, tmp_path_factory) -> Scenario:
    with ScriptedOpenAI() as model:
        acpx = AcpxRunner(acpx_install, model.url, tmp_path_factory.mktemp("acpx-sessions"))
        try:
            created = acpx.run("sessions", "new")
            model.add({"text": "Use a remote backend."}, {"text": "OSS with a Tablestore lock."})
            first = acpx.run("--ttl", SHORT_TTL, "prompt", "Where should Terraform state live?")
            _wait_for_owner_exit(acpx)
            second = acpx.run("--ttl", LONG_TTL, "prompt", "Which backend on Alibaba Cloud?")
            listed = acpx.run("sessions", "list")
            model.add({"text": "Planning the migration step by step", "hang": True})
            long = acpx.start("--ttl", LONG_TTL, "prompt", "Plan the state migration")
            try:
                _wait_for_model_requests(model, 3)
                cancel = acpx.run("cancel")
                long_run = _finish(long)
            finally:
                if long.poll() is None:
                    long.kill()
                    long.communicate()
        finally:
            acpx.run("sessions", "close")  # also stops the queue owner and its agent
        return Scenario(acpx.workspace, created, first, second, listed, long_run, cancel, list(model.requests))


def test_every_step_succeeds(scenario):
    for run in (scenario.created, scenario.first, scenario.second, scenario.listed, scenario.long, scenario.cancel):
        assert run.returncode == 0, run.describe()


def test_prompt_resumes_the_session_that_sessions_new_created(scenario):
    created_id = _created_session(scenario)
    assert _resumed(scenario.first)["params"] == {
        "sessionId": created_id,
        "cwd": str(scenario.workspace),
        "mcpServers": [],
    }
    assert _prompted_session(scenario.first) == created_id


def test_first_prompt_streams_its_answer(scenario):
    messages = scenario.first.messages
    assert response_to(messages, only_request(messages, "session/prompt"))["result"]["stopReason"] == "end_turn"
    assert answer_text(messages) == "Use a remote backend."


def test_a_new_agent_process_resumes_the_session_with_its_history(scenario):
    assert _resumed(scenario.second)["params"]["sessionId"] == _created_session(scenario)
    assert _prompted_session(scenario.second) == _created_session(scenario)
    # session/resume must not replay the history (session/load does)
    assert updates(scenario.second.messages, "user_message_chunk") == []
    assert answer_text(scenario.second.messages) == "OSS with a Tablestore lock."
    history = [(m["role"], m["content"]) for m in scenario.model_requests[1]["messages"] if m["role"] != "system"]
    assert history == [
        ("user", "Where should Terraform state live?"),
        ("assistant", "Use a remote backend."),
        ("user", "Which backend on Alibaba Cloud?"),
    ]


def test_sessions_list_shows_the_prompted_session_from_the_agent(scenario):
    (listing,) = scenario.listed.messages
    assert listing["source"] == "agent"  # answered by session/list, not by acpx's own records
    by_id = {s["sessionId"]: s for s in listing["sessions"]}
    prompted = by_id[_prompted_session(scenario.first)]
    assert prompted["cwd"] == str(scenario.workspace)
    assert prompted["title"] == "Where should Terraform state live?"


def test_cancel_ends_the_running_turn_as_cancelled(scenario):
    (answer,) = scenario.cancel.messages
    assert answer["cancelled"] is True
    messages = scenario.long.messages
    session_id = _prompted_session(scenario.long)
    cancels = [m for m in messages if m.get("method") == "session/cancel"]
    assert [m["params"]["sessionId"] for m in cancels] == [session_id]
    assert response_to(messages, only_request(messages, "session/prompt"))["result"]["stopReason"] == "cancelled"
    # the part streamed before the model stalled reached the client before the cancel
    assert answer_text(messages).startswith("Planning")
    first_chunk = next(i for i, m in enumerate(messages) if updates([m], "agent_message_chunk"))
    assert first_chunk < messages.index(cancels[0])
