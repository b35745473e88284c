"""The loop's side of the audit trail: what a decision's record says (source, arguments' digest and
redacted short form, plan), an infrastructure change's outcome, and a call that does not run when its
decision could not be recorded."""

from __future__ import annotations

import logging

import pytest
from tests.unit.agent.fakes import FakeProvider, FakeTool, call, make_loop, say

from iac_code.agent.audit import SHORT_CHARS, TrailRecorder, arguments_digest
from iac_code.agent.events import PermissionRequest, ToolFinished
from iac_code.agent.loop import AgentLoop
from iac_code.agent.policy import EVERY_OPTION, ONCE_OPTIONS, Ask, Refuse, Run, Verdict
from iac_code.messages import ToolCall
from iac_code.sessions.audit import AuditRecord, AuditUnavailable
from iac_code.tools.base import AccessDetails, ToolResult

PLAN = {"sha256": "c0" * 32, "counts": {"create": 1, "delete": 0}, "resources": [{"address": "a.b"}]}


class ListTrail:
    def __init__(self, failure: Exception | None = None) -> None:
        self.records: list[AuditRecord] = []
        self.failure = failure

    async def append(self, record: AuditRecord) -> None:
        if self.failure is not None:
            raise self.failure
        self.records.append(record)

    async def read(self, session: str | None = None, since: str | None = None) -> list[AuditRecord]:
        return self.records


def recorder(trail: ListTrail, **options: str) -> TrailRecorder:
    return TrailRecorder(trail, "s1", lambda: "alice", **options)  # type: ignore[arg-type]


def bash(command: str, call_id: str = "c1") -> ToolCall:
    return ToolCall(call_id, "bash", {"command": command})


@pytest.mark.parametrize(
    ("verdict", "answer", "decision", "source"),
    [
        (Run(source="mode:accept-edits"), None, "allowed", "mode:accept-edits"),
        (Refuse("no", source="remembered"), None, "denied", "remembered"),
        (Refuse("no", source="rule:settings.json:deny[2]"), None, "denied", "rule:settings.json:deny[2]"),
        (Ask(EVERY_OPTION, source="mode:default"), "allow_always", "allowed", "user:allow_always"),
        (Ask(EVERY_OPTION, source="mode:default"), "reject_once", "denied", "user:reject_once"),
        (Ask(EVERY_OPTION, source="mode:default"), "cancelled", "denied", "user:cancelled"),
    ],
)
async def test_a_decision_says_what_decided(verdict: Verdict, answer, decision, source):
    trail = ListTrail()
    await recorder(trail).decided(bash("ls"), "bash", verdict, answer, None)
    (record,) = trail.records
    assert (record.kind, record.principal, record.session, record.tool) == ("decision", "alice", "s1", "bash")
    assert (record.decision, record.source) == (decision, source)
    assert record.digest == arguments_digest({"command": "ls"}) and record.arguments == '{"command":"ls"}'


async def test_headless_answers_and_its_allowed_tools_are_the_flags():
    trail = ListTrail()
    headless = recorder(trail, answered_by="headless-flag")
    await headless.decided(bash("ls"), "bash", Ask(EVERY_OPTION, source="mode:default"), "reject_once", None)
    await headless.decided(bash("ls"), "bash", Run(source="remembered"), None, None)  # --allow-tools bash
    await headless.decided(bash("ls"), "bash", Run(source="mode:bypass-permissions"), None, None)  # --yes: the mode
    assert [r.source for r in trail.records] == ["headless-flag", "headless-flag", "mode:bypass-permissions"]


def test_the_digest_is_of_the_arguments_whatever_their_order():
    assert arguments_digest({"a": 1, "b": "x"}) == arguments_digest({"b": "x", "a": 1})
    assert arguments_digest({"a": 1}) != arguments_digest({"a": 2})


@pytest.mark.parametrize(
    ("arguments", "short"),
    [
        ({"command": "export TF_VAR_db_password=s3cr3t && terraform plan"}, "TF_VAR_db_password=***"),
        ({"command": "mysql --password hunter2 -e 'select 1'"}, "--password *** -e"),
        ({"command": "curl -H 'X-Api-Key: abc123' https://x"}, "X-Api-Key: ***"),
        ({"command": 'vault login token="a b c"'}, 'token=***"'),
        ({"env": {"GITHUB_TOKEN": "ghp_x", "REGION": "eu"}}, '{"env":{"GITHUB_TOKEN":"***","REGION":"eu"}}'),
        ({"items": [{"client_secret": "zz"}]}, '{"items":[{"client_secret":"***"}]}'),
    ],
)
def test_the_short_form_redacts_secrets(arguments, short):
    text = recorder(ListTrail()).short_form(arguments)
    assert short in text
    assert not any(secret in text for secret in ("s3cr3t", "hunter2", "abc123", "a b c", "ghp_x", "zz"))


def test_the_short_form_is_short():
    text = recorder(ListTrail()).short_form({"content": "x" * 1000})
    assert len(text) == SHORT_CHARS and text.endswith("…")


async def test_an_allowed_infrastructure_change_gets_its_outcome_with_the_plan():
    trail = ListTrail()
    audit = recorder(trail)
    change = Ask(ONCE_OPTIONS, infrastructure_change=True, source="mode:default")
    await audit.decided(bash("terraform apply"), "bash", change, "allow_once", AccessDetails("plan", PLAN))
    await audit.decided(bash("ls", "c2"), "bash", Run(source="mode:default"), None, None)
    await audit.decided(bash("kubectl delete ns x", "c3"), "bash", change, "reject_once", None)
    for call_id, code in (("c2", 0), ("c3", None), ("c1", 3)):
        await audit.finished(bash("", call_id), ToolResult("done", exit_code=code))
    assert [(r.kind, r.decision, r.exit_status) for r in trail.records] == [
        ("decision", "allowed", None),
        ("decision", "allowed", None),
        ("decision", "denied", None),
        ("outcome", "allowed", 3),  # only the allowed change
    ]
    outcome = trail.records[-1]
    assert outcome.plan_sha256 == PLAN["sha256"] and outcome.plan_counts == {"create": 1, "delete": 0}
    assert outcome.source == "user:allow_once" and outcome.arguments == '{"command":"terraform apply"}'


async def test_an_outcome_that_cannot_be_written_is_logged(caplog):
    trail = ListTrail()
    audit = recorder(trail)
    await audit.decided(bash("apply"), "bash", Ask(ONCE_OPTIONS, True, "mode:default"), "allow_once", None)
    trail.failure = OSError("disk full")
    with caplog.at_level(logging.ERROR):
        await audit.finished(bash("apply"), ToolResult("ok", exit_code=0))
    assert "could not be written to the audit trail" in caplog.text


async def test_any_failure_to_record_is_the_trail_unavailable():
    with pytest.raises(AuditUnavailable, match="RuntimeError: pool closed"):
        await recorder(ListTrail(RuntimeError("pool closed"))).decided(bash("ls"), "bash", Run(), None, None)


async def run_turn(loop: AgentLoop) -> list[object]:
    events = []
    async for event in loop.run("go"):
        events.append(event)
        if isinstance(event, PermissionRequest):
            event.resolve("allow_once")
    return events


@pytest.mark.parametrize("verdict", [Run(source="mode:default"), Ask(EVERY_OPTION, source="mode:default")])
async def test_a_call_whose_decision_is_not_recorded_does_not_run(verdict: Verdict):
    tool = FakeTool("act")
    provider = FakeProvider(call("act"), say("ok"))
    trail = ListTrail(AuditUnavailable("OperationalError: database is locked"))
    loop = make_loop(provider, [tool], judge=lambda call: verdict, recorder=recorder(trail))
    events = await run_turn(loop)
    assert tool.runs == []
    (finished,) = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.result.is_error
    assert finished.result.text.startswith("Not run: the audit trail could not be written (OperationalError")


async def test_a_refusal_keeps_its_reason_when_the_trail_fails():
    tool = FakeTool("act")
    trail = ListTrail(AuditUnavailable("x"))
    judge = lambda call: Refuse("Permission denied.")  # noqa: E731
    loop = make_loop(FakeProvider(call("act"), say("ok")), [tool], judge=judge, recorder=recorder(trail))
    (finished,) = [e for e in await run_turn(loop) if isinstance(e, ToolFinished)]
    assert finished.result.text == "Permission denied." and tool.runs == []


async def test_the_loop_records_each_decision_before_the_call_runs():
    tool = FakeTool("act")
    trail = ListTrail()
    seen_before_run: list[int] = []
    original = tool.run

    async def run(arguments, ctx):  # type: ignore[no-untyped-def]
        seen_before_run.append(len(trail.records))
        return await original(arguments, ctx)

    tool.run = run  # type: ignore[method-assign]
    loop = make_loop(
        FakeProvider(call("act", path="x"), say("ok")),
        [tool],
        judge=lambda call: Run(source="mode:default"),
        recorder=recorder(trail),
    )
    await run_turn(loop)
    assert seen_before_run == [1] and trail.records[0].arguments == '{"path":"x"}'
