"""A screenshot for the record (artifacts/web-client.png; docs/web-client.png is a copy of one): a turn that
thinks, plans, edits (allowed: shown as a diff) and answers in markdown, on a server of its own so that the
session list shows this conversation only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.e2e.http.server_process import ServerProcess, http_server
from tests.e2e.web.page import by_testid
from tests.fakes.openai_server import ScriptedOpenAI

MAIN_TF = 'resource "aws_s3_bucket" "logs" {\n  bucket = "acme-logs"\n  tags = {\n    team = "platform"\n  }\n}\n'
PLAN = [
    {"content": "Read main.tf", "status": "completed", "priority": "high"},
    {"content": "Turn on versioning for the logs bucket", "status": "in_progress", "priority": "high"},
    {"content": "Run terraform plan", "status": "pending", "priority": "medium"},
]
VERSIONING = '\nresource "aws_s3_bucket_versioning" "logs" {\n  bucket = aws_s3_bucket.logs.id\n  versioning_configuration {\n    status = "Enabled"\n  }\n}\n'
ANSWER = (
    "Versioning is now **enabled** for `aws_s3_bucket.logs`:\n\n"
    "- a new `aws_s3_bucket_versioning` resource\n- nothing else changes\n\n"
    "Run `terraform plan` to review it before applying."
)


def calls(*pairs: tuple[str, dict]) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments} for name, arguments in pairs]}


@pytest.fixture(scope="module")
def live(model: ScriptedOpenAI) -> Iterator[ServerProcess]:
    with http_server(model.url) as server:
        yield server


def test_a_screenshot_for_the_record(page, model, live):
    (live.workspace / "main.tf").write_text(MAIN_TF)
    edit = {
        "path": "main.tf",
        "old_string": '    team = "platform"\n  }\n}\n',
        "new_string": '    team = "platform"\n  }\n}\n' + VERSIONING,
    }
    model.add(
        {"thinking": "The bucket has no versioning block; add one.", **calls(("update_plan", {"entries": PLAN}))},
        calls(("edit_file", edit)),
        {"text": ANSWER},
    )
    page.driver.set_window_size(1280, 1180)  # the whole turn in one picture
    page.open()
    page.new_session()
    page.send("Turn on versioning for the logs bucket")
    page.answer_permission("allow_once")
    assert page.wait_turns(1) == ["end_turn"]
    page.until(lambda: len(page.all(".diff .added")) > 3, "no diff")
    page.until(lambda: page.all(f"{by_testid('agent-message')} strong"), "markdown not rendered")
    assert page.screenshot_to("web-client.png").stat().st_size > 10_000
