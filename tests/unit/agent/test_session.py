"""The session core in-process, through a recording face (no protocol): the judge and remembered answers,
the slash commands, the title, one prompt at a time, cancel, mode and model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from tests.unit.agent.fakes import FakeProvider, FakeTool, call, say, workspace_at

from iac_code.agent.events import Event, PermissionRequest, TextDelta, ToolFinished, ToolUseStart
from iac_code.agent.factory import LoopFactory, LoopParts
from iac_code.agent.loop import AgentLoop, LoopConfig
from iac_code.agent.policy import PERMISSION_DENIED, Choice
from iac_code.agent.session import COMMANDS, SessionCore
from iac_code.agent.session_commands import CommandError, CommandInfo
from iac_code.agent.system_prompt import PLAN_MODE
from iac_code.errors import InvalidParams
from iac_code.messages import Message
from iac_code.skills.discovery import bundled_skills
from iac_code.skills.skill_file import Skill


class RecordingFace:
    """What the session shows, in one ordered list of (kind, what); permission questions are answered with
    the next scripted choice (None: never answered)."""

    def __init__(self, *answers: Choice | None) -> None:
        self.answers = list(answers)
        self.seen: list[tuple[str, Any]] = []

    async def show(self, event: Event) -> None:
        self.seen.append(("event", event))

    async def say(self, text: str) -> None:
        self.seen.append(("say", text))

    async def notice(self, severity: str, title: str, detail: str) -> None:
        self.seen.append(("notice", (severity, title, detail)))

    async def command_failed(self, text: str) -> None:
        self.seen.append(("command_failed", text))

    async def ask(self, request: PermissionRequest) -> Choice:
        self.seen.append(("ask", request))
        answer = self.answers.pop(0)
        if answer is None:
            await asyncio.Event().wait()
        assert answer is not None
        return answer

    async def titled(self, title: str) -> None:
        self.seen.append(("titled", title))

    async def commands_changed(self, commands: list[CommandInfo]) -> None:
        self.seen.append(("commands", commands))

    def of(self, kind: str) -> list[Any]:
        return [what for seen_kind, what in self.seen if seen_kind == kind]

    def events(self, kind: type) -> list[Any]:
        return [event for event in self.of("event") if isinstance(event, kind)]


def loop_factory(provider: FakeProvider, tools: list[FakeTool], workspace: Path) -> LoopFactory:
    def make_loop(parts: LoopParts) -> AgentLoop:
        return AgentLoop(
            LoopConfig(system_prompt="BASE", mode_instructions=parts.mode_instructions, model=parts.model),
            provider,  # type: ignore[arg-type]
            {t.name: t for t in tools},  # type: ignore[misc]
            workspace,
            judge=parts.judge,
            on_message=parts.on_message,
            history=parts.history,
            extra_tools=parts.extra_tools,
            io=parts.io,
        )

    return make_loop


def core(tmp_path: Path, face: RecordingFace, provider: FakeProvider, tools=(), **options: Any) -> SessionCore:
    return SessionCore("s1", workspace_at(tmp_path), face, loop_factory(provider, list(tools), tmp_path), **options)


def user(text: str) -> Message:
    return Message(role="user", text=text)


async def test_the_question_follows_its_call_and_allow_always_is_remembered_and_saved(tmp_path, store):
    writer = FakeTool("write", category="write", kind="edit")
    face = RecordingFace("allow_always")
    provider = FakeProvider(call("write"), say("done"), call("write", "c2"), say("again"))
    live = core(tmp_path, face, provider, [writer], store=store)
    assert (await live.prompt(user("write"))).stop_reason == "end_turn"
    asked = next(index for index, (kind, _) in enumerate(face.seen) if kind == "ask")
    shown_before = face.seen[asked - 1][1]
    assert isinstance(shown_before, ToolUseStart) and shown_before.call.id == face.seen[asked][1].call.id
    assert live.always == {"write": "allow"} and (await store.get("s1")).permissions == {"write": "allow"}
    await live.prompt(user("again"))
    assert len(face.of("ask")) == 1 and writer.runs == [{}, {}], "remembered: not asked again"


async def test_a_remembered_reject_refuses_without_asking(tmp_path):
    writer = FakeTool("write", category="write", kind="edit")
    face = RecordingFace()  # any question fails the test
    live = core(tmp_path, face, FakeProvider(call("write"), say("ok")), [writer], mode="accept-edits")
    live.always["write"] = "reject"
    await live.prompt(user("write"))
    (finished,) = face.events(ToolFinished)
    assert writer.runs == [] and finished.result.text == PERMISSION_DENIED


async def test_the_first_prompt_names_the_session_once(tmp_path, store):
    face = RecordingFace()
    live = core(tmp_path, face, FakeProvider(say("a"), say("b")), store=store)
    await live.prompt(user("\n  Add a VPC module  \nwith two subnets"))
    await live.prompt(user("something else"))
    assert face.of("titled") == ["Add a VPC module"] and live.title == "Add a VPC module"
    assert (await store.get("s1")).title == "Add a VPC module"


async def test_a_second_prompt_while_one_runs_is_refused(tmp_path):
    writer = FakeTool("write", category="write", kind="edit")
    live = core(tmp_path, RecordingFace(None), FakeProvider(call("write")), [writer])
    turn = asyncio.create_task(live.prompt(user("write")))
    while not live.busy or not live._face.of("ask"):  # type: ignore[attr-defined]
        await asyncio.sleep(0.01)
    with pytest.raises(InvalidParams) as refused:
        await live.prompt(user("again"))
    assert refused.value.data == {"sessionId": "a prompt is already running for this session"}
    live.cancel()
    assert (await asyncio.wait_for(turn, 2)).stop_reason == "cancelled" and writer.runs == []
    assert not live.busy


async def test_cancel_while_nobody_answers_ends_the_prompt_cancelled(tmp_path):
    face = RecordingFace(None)
    writer = FakeTool("write", category="write", kind="edit")
    live = core(tmp_path, face, FakeProvider(call("write")), [writer])
    turn = asyncio.create_task(live.prompt(user("write")))
    while not face.of("ask"):
        await asyncio.sleep(0.01)
    live.cancel()
    end = await asyncio.wait_for(turn, 2)
    assert end.stop_reason == "cancelled" and writer.runs == []


async def test_help_lists_the_commands_and_runs_no_turn(tmp_path):
    commands = tmp_path / ".iac-code" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: Review a module\n---\nReview $ARGUMENTS\n")
    face, provider = RecordingFace(), FakeProvider()
    live = core(tmp_path, face, provider)
    await live.prompt(user("/help"))
    (text,) = face.of("say")
    assert provider.calls == [] and "  /check: " in text and "  /review: Review a module" in text
    await live.announce_commands()
    (listed,) = face.of("commands")
    bundled = [skill.name for skill in bundled_skills() if isinstance(skill, Skill)]
    assert [c.name for c in listed] == [*COMMANDS, "init", "review", *bundled]


async def test_a_skill_wins_over_a_markdown_command_of_its_name_and_a_bad_one_is_told_once(tmp_path):
    (tmp_path / ".iac-code" / "commands").mkdir(parents=True)
    (tmp_path / ".iac-code" / "commands" / "tagging.md").write_text("the command's prompt\n")
    skills_dir = tmp_path / ".claude" / "skills"
    (skills_dir / "tagging").mkdir(parents=True)
    (skills_dir / "tagging" / "SKILL.md").write_text("---\nname: tagging\ndescription: Tags.\n---\nTag it.\n")
    (skills_dir / "Broken").mkdir()
    (skills_dir / "Broken" / "SKILL.md").write_text("---\nname: Broken\ndescription: x\n---\n")
    face, provider = RecordingFace(), FakeProvider(say("ok"), say("ok"))
    live = core(tmp_path, face, provider)
    assert live.skills.get("tagging") is not None
    await live.announce_commands()
    await live.prompt(user("/tagging modules/vpc"))
    await live.prompt(user("again"))
    (warning,) = face.of("notice")
    assert warning == (
        "warning",
        "skills",
        f"skipped {skills_dir / 'Broken' / 'SKILL.md'}: "
        "`name` 'Broken' must be lower-case letters, digits and single hyphens, at most 64 characters",
    )
    (listed,) = face.of("commands")
    assert [c.description for c in listed if c.name == "tagging"] == ["Tags."]
    sent = provider.calls[0][-1].text
    assert "Its instructions:\n\nTag it." in sent and sent.endswith("The user's request: modules/vpc")


async def test_a_file_command_becomes_the_prompt_and_an_unknown_word_goes_as_typed(tmp_path):
    commands = tmp_path / ".iac-code" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS for security.\n")
    provider = FakeProvider(say("ok"), say("ok"))
    live = core(tmp_path, RecordingFace(), provider)
    await live.prompt(user("/review modules/vpc"))
    await live.prompt(user("/nope please"))
    assert [calls[-1].text for calls in provider.calls] == ["Review modules/vpc for security.", "/nope please"]


async def test_a_command_that_cannot_run_is_told_and_ends_the_turn(tmp_path):
    class Broken:
        def available(self) -> list[CommandInfo]:
            return [CommandInfo("broken", "Never renders")]

        async def render(self, name: str, arguments: str) -> str | None:
            if name != "broken":
                return None
            raise CommandError("/broken needs a file")

    face, provider = RecordingFace(), FakeProvider()
    live = core(tmp_path, face, provider)
    live.prompt_commands.append(Broken())
    end = await live.prompt(user("/broken"))
    assert end.stop_reason == "end_turn" and provider.calls == []
    assert face.of("command_failed") == ["/broken needs a file"]


async def test_clear_forgets_the_history_in_memory_and_in_the_store(tmp_path, store):
    face = RecordingFace()
    live = core(tmp_path, face, FakeProvider(say("hello")), store=store)
    await live.prompt(user("hi"))
    await live.prompt(user("/clear"))
    assert live.loop.history == [] and (await store.load("s1"))[1] == []
    assert [e.text for e in face.events(TextDelta)] == ["hello"] and face.of("say") == ["Conversation cleared."]


async def test_mode_and_model_reach_the_next_model_call_and_are_saved(tmp_path, store):
    systems: list[str] = []

    class Recording(FakeProvider):
        async def stream(self, system, history, tools, *, max_tokens, cache_key=""):  # type: ignore[override]
            systems.append(system)
            async for event in super().stream(system, history, tools, max_tokens=max_tokens):
                yield event

    provider = Recording(say("a"), say("b"))
    live = core(tmp_path, RecordingFace(), provider, store=store, model="stored-model")
    assert live.model == "stored-model", "the session's model, not the configured default"
    await live.prompt(user("one"))
    await live.set_mode("plan")
    await live.set_model("other-model")
    await live.prompt(user("two"))
    assert systems == ["BASE", f"BASE\n\n{PLAN_MODE}"] and provider.model == "other-model"
    record = await store.get("s1")
    assert (record.mode, record.model) == ("plan", "other-model")
