"""`iac-code -p` has no one to fill a form: the model's question (ask_user) is the run's answer on stdout and
the run ends after it (exit 0, no second model call)."""

from __future__ import annotations

from tests.e2e.test_headless import run
from tests.fakes.openai_server import ScriptedOpenAI

QUESTION = {
    "message": "Which region should the bucket live in?",
    "fields": [{"name": "region", "kind": "choice", "options": [{"value": "eu", "title": "Europe"}, {"value": "us"}]}],
}


def test_a_question_is_the_answer_and_ends_the_run(workspace):
    with ScriptedOpenAI() as model:
        model.add({"tool_calls": [{"name": "ask_user", "arguments": QUESTION}]}, {"text": "never asked for"})
        result = run(workspace, model, "-p", "add a bucket")
        assert result.returncode == 0, result.stderr
        assert "Which region should the bucket live in?\n- region (one of: Europe / us)" in result.stdout
        assert len(model.requests) == 1
