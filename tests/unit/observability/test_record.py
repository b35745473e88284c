"""What the hooks record: spans nested as a turn's work is (sub-agents included) with the session id, tool
call outcomes, decisions by the kind of their source, model calls, and the store's timings."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from iac_code.observability import metrics, tracing
from iac_code.observability.record import (
    ModelCall,
    permission_decided,
    timed_store,
    tool_call,
    tool_call_not_run,
    traced_turn,
    turn_ended,
)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracing.use_exporters([exporter], batch=False)
    yield exporter
    tracing.stop_tracing()


def sample(name: str, **labels: str) -> float:
    return metrics.enable().registry.get_sample_value(name, labels) or 0.0


def named(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {span.name: span for span in exporter.get_finished_spans()}


async def test_a_turn_holds_its_calls_and_a_sub_agents_turn_keeps_the_session(spans):
    turns_before = sample("iac_code_turns_total", stop_reason="end_turn")

    async def subagent() -> None:
        turn_ended("end_turn")  # a sub-agent's turn ends: not a turn of the session's

    async def body() -> str:
        call = ModelCall("openai", "m1")
        call.usage(10, 2)
        call.end("completed")
        with tool_call("agent", "call-1") as observed:
            await traced_turn("", subagent())
            observed.finished(failed=False)
        turn_ended("end_turn")
        return "done"

    assert await traced_turn("s-1", body()) == "done"

    found = named(spans)
    turn, model, tool, nested = found["turn"], found["model_call"], found["tool_call agent"], found["subagent_turn"]
    assert turn.parent is None
    assert model.parent is not None and model.parent.span_id == turn.context.span_id
    assert tool.parent is not None and tool.parent.span_id == turn.context.span_id
    assert nested.parent is not None and nested.parent.span_id == tool.context.span_id
    for span in (turn, model, tool, nested):
        assert span.attributes is not None and span.attributes["session.id"] == "s-1"
    assert model.attributes is not None and model.attributes["gen_ai.usage.input_tokens"] == 10
    assert tool.attributes is not None and tool.attributes["iac_code.outcome"] == "completed"
    assert sample("iac_code_turns_total", stop_reason="end_turn") == turns_before + 1


async def test_a_tool_call_cut_short_is_cancelled_and_one_that_failed_is_failed(spans):
    before = sample("iac_code_tool_calls_total", tool="bash", outcome="cancelled")
    with pytest.raises(asyncio.CancelledError), tool_call("bash", "call-2"):
        raise asyncio.CancelledError
    with tool_call("bash", "call-3") as observed:
        observed.finished(failed=True)
    assert sample("iac_code_tool_calls_total", tool="bash", outcome="cancelled") == before + 1
    assert sample("iac_code_tool_calls_total", tool="bash", outcome="failed") >= 1
    outcomes = [span.attributes["iac_code.outcome"] for span in spans.get_finished_spans() if span.attributes]
    assert outcomes == ["cancelled", "failed"]


def test_a_made_up_tool_name_is_not_a_label_of_its_own():
    metrics.enable()
    tool_call_not_run("no_such_tool_1234", "unknown_tool")
    assert sample("iac_code_tool_calls_total", tool="(unknown)", outcome="unknown_tool") >= 1
    assert sample("iac_code_tool_calls_total", tool="no_such_tool_1234", outcome="unknown_tool") == 0


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("mode:default", "mode"),
        ("remembered", "remembered"),
        ("rule:/repo/.iac-code/settings.json:Bash(rm *)", "rule"),
        ("user", "user"),
        ("headless-flag", "headless-flag"),
        ("", "unspecified"),
    ],
)
def test_decisions_are_counted_by_the_kind_of_their_source(source, kind):
    before = sample("iac_code_permission_decisions_total", source=kind, decision="denied")
    permission_decided(source, allowed=False)
    assert sample("iac_code_permission_decisions_total", source=kind, decision="denied") == before + 1


class FakeStore:
    name = "fake"

    def __init__(self) -> None:
        self.appended: list[str] = []

    async def append(self, session_id: str) -> None:
        self.appended.append(session_id)

    async def load(self, session_id: str) -> str:
        raise KeyError(session_id)

    def submit(self) -> str:
        return "sync"


async def test_a_timed_store_times_every_coroutine_method_and_passes_the_rest():
    metrics.enable()
    inner = FakeStore()
    store = timed_store(inner)
    appends = sample("iac_code_store_seconds_count", operation="append")
    loads = sample("iac_code_store_seconds_count", operation="load")
    await store.append("s-1")
    with pytest.raises(KeyError):
        await store.load("s-2")
    assert inner.appended == ["s-1"]
    assert store.submit() == "sync" and store.name == "fake"
    assert sample("iac_code_store_seconds_count", operation="append") == appends + 1
    assert sample("iac_code_store_seconds_count", operation="load") == loads + 1  # failures take time too


async def test_a_manual_compaction_is_traced_with_its_session_but_is_no_turn(spans):
    turns_before = sample("iac_code_turns_total", stop_reason="end_turn")

    async def compaction() -> None:
        ModelCall("openai", "m1").end("completed")

    await traced_turn("s-2", compaction(), name="compaction")
    found = named(spans)
    assert found["compaction"].attributes is not None and found["compaction"].attributes["session.id"] == "s-2"
    model = found["model_call"]
    assert model.parent is not None and model.parent.span_id == found["compaction"].context.span_id
    assert model.attributes is not None and model.attributes["session.id"] == "s-2"
    assert sample("iac_code_turns_total", stop_reason="end_turn") == turns_before
