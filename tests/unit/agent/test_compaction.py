from tests.unit.agent.fakes import FakeProvider, FakeTool, call, make_loop, say

from iac_code.agent.compaction import ContextMeter, split_for_compaction
from iac_code.agent.events import Compaction
from iac_code.agent.loop import LoopConfig
from iac_code.messages import Image, Message, ToolCall, context_messages, tool_result, unanswered_tool_calls, user


def turn(n: int, with_tool: bool = True) -> list[Message]:
    messages = [user(f"question {n}")]
    if with_tool:
        c = ToolCall(f"t{n}", "look", {})
        messages += [Message(role="assistant", tool_calls=[c]), tool_result(c, "x" * 100)]
    return [*messages, Message(role="assistant", text=f"answer {n}")]


def test_split_keeps_the_latest_turns_whole_and_never_separates_a_tool_call():
    history = turn(1) + turn(2) + turn(3)
    old, kept = split_for_compaction(history, keep_turns=2)
    assert old == turn(1)
    assert history[-kept:] == turn(2) + turn(3)
    assert history[-kept].role == "user"


def test_split_with_one_turn_has_nothing_to_compact():
    old, _ = split_for_compaction(turn(1), keep_turns=2)
    assert old == []


def test_context_after_a_summary_is_summary_then_kept_turns_then_new():
    history = turn(1) + turn(2)
    _old, kept = split_for_compaction(history, keep_turns=1)
    history.append(Message(role="user", text="[summary]", summary=True, kept=kept))
    history += turn(3)
    context = context_messages(history)
    assert context[0].summary
    assert context[1:] == turn(2) + turn(3)
    # A second compaction only keeps turns that came after the first summary.
    old2, kept2 = split_for_compaction(history, keep_turns=1)
    assert old2[0].summary and old2[1:] == turn(2)
    assert history[-kept2:] == turn(3)


def test_meter_uses_reported_tokens_plus_an_estimate_of_what_was_added():
    meter = ContextMeter()
    context = [user("a" * 400)]
    assert meter.estimate(context, 0) == (400 + 16) // 4  # text plus a per-message overhead
    meter.record(5000, context, 0)
    context.append(Message(role="assistant", text="b" * 4000))
    assert 5900 < meter.estimate(context, 0) < 6100


def test_an_image_counts_as_the_most_a_provider_charges_for_one():
    meter = ContextMeter()
    pixel = Image("image/png", "iVBORw0KGgo=")  # a few bytes of base64; the API still bills it as an image
    with_images = [Message(role="tool", text="a diagram", images=[pixel, pixel])]
    assert meter.estimate(with_images, 0) == meter.estimate([Message(role="tool", text="a diagram")], 0) + 3200


async def test_auto_compaction_summarises_old_turns_when_the_window_fills():
    big = "y" * 4000  # ~1000 tokens per answer against a 3000-token window
    provider = FakeProvider(
        say(big, input_tokens=1000),
        say(big, input_tokens=2200),
        say("the summary"),  # the compaction call
        say("fresh answer", input_tokens=500),
        context_window=3000,
    )
    loop = make_loop(provider, config=LoopConfig(compact_threshold=0.8, system_prompt="s"))
    for prompt in ("one", "two"):
        [e async for e in loop.run(prompt)]
    events = [e async for e in loop.run("three")]
    assert any(isinstance(e, Compaction) and "compacted" in e.message for e in events)
    summary_request = provider.calls[2]
    assert "Summarise this conversation" in summary_request[0].text and "one" in summary_request[0].text
    context = provider.calls[3]
    assert context[0].summary and "the summary" in context[0].text
    assert [m.text for m in context[1:]] == ["two", big, "three"], "the latest two turns stay whole"
    assert [m.text for m in loop.history[:2]] == ["one", big], "the full log stays for replay"


async def test_manual_compaction_of_a_short_conversation_says_so():
    loop = make_loop(FakeProvider(say("hi")))
    [e async for e in loop.run("one")]
    events = [e async for e in loop.compact()]
    assert isinstance(events[0], Compaction) and "Nothing to compact" in events[0].message


async def test_manual_compaction_keeps_history_valid_with_tools():
    provider = FakeProvider(call("look", "a"), say("one done"), say("two done"), say("three done"), say("sum"))
    loop = make_loop(provider, [FakeTool("look")])
    for prompt in ("one", "two", "three"):
        [e async for e in loop.run(prompt)]
    events = [e async for e in loop.compact()]
    assert any(isinstance(e, Compaction) and "compacted" in e.message for e in events)
    context = context_messages(loop.history)
    assert context[0].summary
    assert unanswered_tool_calls(context) == []
    assert [m.text for m in context[1:] if m.role == "user"] == ["two", "three"]
