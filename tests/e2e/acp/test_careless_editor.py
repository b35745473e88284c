"""An editor whose terminals misbehave (issue 18, items 5 and 6): one that ignores `outputByteLimit`
and sends 50 MB of output, and one that never answers terminal/kill, terminal/release or
terminal/output. The model gets a bounded result each time, the call ends, and the turn goes on."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from acp import text_block
from acp.client.connection import ClientSideConnection
from tests.e2e.acp.editor import CarelessEditor, editing
from tests.e2e.acp.test_editor_client import calls, finals, open_session, tool_texts
from tests.e2e.sessions.flows import stored_messages

from iac_code.acp.client_io import ANSWER_SECONDS
from iac_code.tools.base import MAX_OUTPUT_CHARS

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT = 1  # the bash call's own timeout, in seconds
SLACK = 10  # for a machine shared by many test runs
ROOM = 2_000  # what may come with a capped output: the cut mark, the exit code, JSON quoting

Shared = tuple[CarelessEditor, ClientSideConnection, Path]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(model, tmp_path_factory) -> AsyncIterator[Shared]:
    editor = CarelessEditor()
    config = tmp_path_factory.mktemp("config")
    async with editing(editor, model.url, config) as conn:
        yield editor, conn, config


@pytest.fixture
def careless(shared: Shared) -> Shared:
    editor, _, _ = shared
    editor.reset()
    editor.keeps_everything, editor.silent = False, ()
    return shared


async def prompt_within(conn: ClientSideConnection, session_id: str, seconds: float) -> tuple[str, float]:
    started = time.monotonic()
    response = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=[text_block("go")]), seconds)
    return response.stop_reason, time.monotonic() - started


async def test_a_50_mb_output_reaches_the_model_the_editor_and_the_log_capped(model, workspace, careless):
    editor, conn, config = careless
    editor.keeps_everything = True  # it ignores outputByteLimit
    model.add(calls(("bash", {"command": "seq 1 7000000"})), {"text": "Counted."})  # 55 MB
    session_id = await open_session(conn, workspace)
    stop_reason, _ = await prompt_within(conn, session_id, 120)
    assert stop_reason == "end_turn"
    assert editor.created[0]["output_byte_limit"] == MAX_OUTPUT_CHARS, "the editor was told the limit"
    (text,) = tool_texts(model.requests[1])
    assert text.startswith("1\n2\n3\n") and text.endswith("6999999\n7000000\nExit code: 0")
    assert "characters cut ...]" in text and len(text) < MAX_OUTPUT_CHARS + ROOM
    grown = len(json.dumps(model.requests[1])) - len(json.dumps(model.requests[0]))
    assert grown < len(json.dumps(text)) + ROOM, "what the model server received: the capped output and the call"
    updates = [u.model_dump_json() for u in editor.of_kind("tool_call_update")]
    assert updates and max(map(len, updates)) < len(json.dumps(text)) + ROOM
    logged = sum(len(json.dumps(message)) for message in stored_messages(config, session_id))
    assert 0 < logged < 4 * MAX_OUTPUT_CHARS, "the session log"


async def test_a_kill_the_editor_never_answers_is_given_up_and_the_turn_goes_on(model, workspace, careless):
    editor, conn, _ = careless
    editor.silent = ("terminal/kill",)
    model.add(calls(("bash", {"command": "sleep 60", "timeout": TIMEOUT})), {"text": "It hung."})
    session_id = await open_session(conn, workspace)
    stop_reason, took = await prompt_within(conn, session_id, TIMEOUT + ANSWER_SECONDS + SLACK)
    assert stop_reason == "end_turn" and len(model.requests) == 2, "the model got the result and answered"
    assert took >= TIMEOUT + ANSWER_SECONDS, "the editor was given its time"
    final = finals(editor)[-1]
    assert final.status == "failed"
    (text,) = tool_texts(model.requests[1])
    assert f"Command timed out after {TIMEOUT} s.\n" in text
    assert f"The editor did not stop the terminal within {ANSWER_SECONDS:g} s" in text
    assert [m for m in editor.log if m != "terminal/output"][-2:] == ["terminal/kill", "terminal/release"]


async def test_a_release_the_editor_never_answers_is_given_up_and_the_turn_goes_on(model, workspace, careless):
    editor, conn, _ = careless
    editor.silent = ("terminal/release",)
    model.add(calls(("bash", {"command": "echo validated"})), {"text": "Done."})
    session_id = await open_session(conn, workspace)
    stop_reason, _ = await prompt_within(conn, session_id, ANSWER_SECONDS + SLACK)
    assert stop_reason == "end_turn" and len(model.requests) == 2
    assert finals(editor)[-1].status == "failed"
    (text,) = tool_texts(model.requests[1])
    assert text == (
        "validated\nExit code: 0\n"
        f"The editor did not release the terminal within {ANSWER_SECONDS:g} s (no answer to terminal/release)."
    )


async def test_an_output_the_editor_never_sends_is_given_up_after_the_timeout(model, workspace, careless):
    editor, conn, _ = careless
    editor.silent = ("terminal/wait_for_exit", "terminal/output")
    model.add(calls(("bash", {"command": "sleep 60", "timeout": TIMEOUT})), {"text": "No output."})
    session_id = await open_session(conn, workspace)
    stop_reason, _ = await prompt_within(conn, session_id, TIMEOUT + ANSWER_SECONDS + SLACK)
    assert stop_reason == "end_turn" and len(model.requests) == 2
    assert finals(editor)[-1].status == "failed"
    (text,) = tool_texts(model.requests[1])
    assert f"The editor did not send the terminal's output within {ANSWER_SECONDS:g} s" in text
    assert "terminal/kill" in editor.log, "the command was stopped at its timeout"
