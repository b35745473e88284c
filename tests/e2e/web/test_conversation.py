"""A conversation in the browser, over each transport: a streamed markdown answer with its thought and stop
reason; writes allowed (on disk) and rejected (not); a reload that lists the session and replays it; cancel;
the mode select; plan entries and slash commands; a narrow window."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.keys import Keys
from tests.e2e.web.canary import canary_listener
from tests.e2e.web.page import INLINE_REPORTS, WebPage, by_testid

ANSWER = "Here is **the plan**:\n\n- first `step`\n- second step\n\n<img src=x onerror=alert(1)>done"
# What a prompt-injected answer might try, each marking window.__canary* or reaching the test's listener if it acts.
PAYLOAD = """

<img src="{origin}/img" onerror="window.__canaryImage = 1"><img src=x onerror="window.__canaryBroken = 1">
<script>window.__canaryScript = 1</script><iframe src="{origin}/frame"></iframe><object data="{origin}/object"></object>
<style>body {{ display: none }}</style><base href="{origin}/"><form action="{origin}/form"><button>go</button></form>
<svg><script>window.__canarySvg = 1</script><image href="{origin}/svg-image"></image></svg>
<a href="javascript:window.__canaryLink = 1">a link</a> and
[a markdown link](javascript:window.__canaryMarkdownLink=1) and ![an image]({origin}/markdown-image)
"""


# Every control a keyboard or a screen reader reaches, with no name to announce.
UNLABELLED = """
return [...document.querySelectorAll("button, input, select, textarea")]
  .filter((control) => control.type !== "hidden")
  .filter((control) => !(control.labels?.length || control.getAttribute("aria-label") || control.textContent.trim()))
  .map((control) => control.outerHTML);
"""


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


@pytest.fixture(params=["websocket", "sse"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def open_client(page: WebPage, transport: str | None = None) -> None:
    """The client as a user opens it (WebSocket when it can), or on the transport named."""
    page.open(f"?transport={transport}" if transport else "")
    connected = page.connected()
    assert transport is None or connected == transport


def test_a_streamed_answer_in_markdown_with_its_thought_and_stop_reason(page, model, transport):
    with canary_listener() as canary:
        answer_text = ANSWER + PAYLOAD.format(origin=canary.origin)
        model.add({"thinking": "Let me think about it.", "text": answer_text, "chunk_chars": 5, "delay": 0.01})
        open_client(page, transport)
        page.new_session()
        page.send("Hello")

        assert page.wait_turns(1) == ["end_turn"]
        assert page.texts("user-message") == ["Hello"]
        (answer,) = page.all(by_testid("agent-message"))
        page.until(lambda: answer.find_elements("css selector", "strong"), "markdown not rendered")
        assert answer.find_element("css selector", "strong").text == "the plan"
        assert [li.text for li in answer.find_elements("css selector", "li")] == ["first step", "second step"]
        assert page.unsafe_markup(answer) == [], "the answer was not sanitised"
        page.images_loaded(answer)  # every handler an image could fire has had its chance
        for link in answer.find_elements("css selector", "a"):
            link.click()
        assert len(page.driver.window_handles) == 1 and "session=" in page.driver.current_url  # nowhere went
        assert page.canaries() == {}, "a payload ran"
        assert canary.paths == [], "the page fetched what the answer named"
        # What the browser said of the payload is evidence, not a requirement (versions differ): only refusals of it.
        said = [line for line in page.console() if "Content Security Policy" in line]
        assert all(canary.origin in line or any(t in line for t in INLINE_REPORTS) for line in said), said

    (thought,) = page.all(by_testid("thought"))
    assert thought.get_attribute("open") is None  # folded away
    assert "input" in page.one(by_testid("stop-reason")).text
    assert not page.one("#attach-label").is_displayed()  # this model takes no images
    assert page.script("return performance.getEntriesByName('iac-code:interactive').length") == 1  # for bench/web.py


def test_the_pages_policy_refuses_an_inline_handler_it_did_not_write(page):
    """The positive control: the second wall behind the sanitiser holds in this browser."""
    open_client(page)
    directives, ran = page.inline_handler_refused()
    assert "script-src-attr" in directives and not ran, (directives, ran)


def test_a_write_allowed_is_written_and_one_rejected_is_not(page, model, live, transport):
    allowed, rejected = f"allowed-{transport}.tf", f"rejected-{transport}.tf"
    model.add(write(allowed, "# yes\n"), {"text": "wrote it"}, write(rejected, "# no\n"), {"text": "refused"})
    open_client(page, transport)
    page.new_session()

    page.send("write one file")
    assert allowed in page.answer_permission("allow_once")
    page.wait_turns(1)
    card = page.one(by_testid("tool-call"))
    assert card.get_attribute("data-status") == "completed" and card.get_attribute("data-kind") == "edit"
    assert card.find_elements("css selector", ".diff .added")  # the edit shown as a diff
    assert (live.workspace / allowed).read_text() == "# yes\n"

    page.send("write another")
    page.answer_permission("reject_once")
    page.wait_turns(2)
    cards = page.all(by_testid("tool-call"))
    assert cards[1].get_attribute("data-status") == "failed"
    assert not (live.workspace / rejected).exists()


def test_a_commands_output_shows_as_a_terminal_folded_when_long(page, model, live):
    model.add({"tool_calls": [{"name": "bash", "arguments": {"command": "seq 1 40"}}]}, {"text": "counted"})
    open_client(page)
    page.new_session()
    page.send("count to 40")
    page.answer_permission("allow_once")
    page.wait_turns(1)
    card = page.one(by_testid("tool-call"))
    assert card.get_attribute("data-kind") == "execute" and card.get_attribute("data-status") == "completed"
    folded = card.find_element("css selector", "details.long-output")
    assert folded.get_attribute("open") is None and folded.text.startswith("Show output (")
    folded.find_element("css selector", "summary").click()
    output = folded.find_element("css selector", "pre.terminal").text
    assert output.split()[:3] == ["1", "2", "3"] and "40" in output.split()


def test_a_sub_agents_steps_show_while_it_works(page, model, live):
    (live.workspace / "vpc.tf").write_text('resource "aws_vpc" "main" {}\n')
    model.add(
        {"tool_calls": [{"name": "agent", "arguments": {"description": "Find VPCs", "prompt": "List the VPCs"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "vpc.tf"}}]},  # the sub-agent's step
        {"text": "still looking", "hang": True},  # then it keeps working until cancelled
    )
    open_client(page)
    page.new_session()
    page.send("find the VPCs")
    page.answer_permission("allow_once")
    steps = f"{by_testid('tool-call')} ol.steps li"  # re-rendered at each step: read the text as it is found
    page.until(lambda: "✓ Read vpc.tf" in [step.text for step in page.all(steps)], "no finished step shown")
    page.one(by_testid("cancel")).click()
    assert page.wait_turns(1) == ["cancelled"]


def test_a_reload_lists_the_session_and_replays_its_history(page, model, live):
    model.add(write("replayed.tf", "# r\n"), {"text": "All **done**."})
    open_client(page)
    session_id = page.new_session()
    page.send("make replayed.tf")
    page.answer_permission("allow_once")
    page.wait_turns(1)

    page.driver.refresh()
    page.connected()
    item = page.one(f'{by_testid("session-item")}[data-session-id="{session_id}"]')
    assert item.get_attribute("aria-current") == "true"
    page.until(lambda: page.texts("agent-message") == ["All done."], "history not replayed")
    assert page.texts("user-message") == ["make replayed.tf"]
    (card,) = page.all(by_testid("tool-call"))
    assert card.get_attribute("data-status") == "completed"
    assert page.session_id() == session_id


def test_a_fork_opens_with_the_history_and_a_delete_forgets_it(page, model):
    model.add({"text": "the original answer"})
    open_client(page)
    original = page.new_session()
    page.send("to be forked")
    page.wait_turns(1)

    def item(session_id: str) -> str:
        return f'{by_testid("session-item")}[data-session-id="{session_id}"]'

    page.one(f'{item(original)} button[aria-label^="Fork"]').click()
    page.until(lambda: page.session_id() != original, "the fork was not opened")
    fork = page.session_id()
    page.until(lambda: page.texts("agent-message") == ["the original answer"], "the fork has no history")
    assert page.one(item(fork)).get_attribute("aria-current") == "true"

    page.one(f'{item(fork)} button[aria-label^="Delete"]').click()
    page.driver.switch_to.alert.accept()  # "Delete … and its history?"
    page.until(lambda: not page.all(item(fork)), "the fork is still listed")
    assert "session=" not in page.driver.current_url
    page.driver.refresh()  # the agent forgot it too
    page.connected()
    page.one(item(original))
    assert not page.all(item(fork))


@pytest.mark.parametrize("how", ["button", "escape"])
def test_cancel_during_a_slow_answer(page, model, how):
    model.add({"text": "I am going to take a very long time", "hang": True})
    open_client(page)
    page.new_session()
    page.send("take your time")
    page.until(lambda: page.texts("agent-message") and page.texts("agent-message")[0], "nothing streamed")
    if how == "button":
        page.one(by_testid("cancel")).click()
    else:
        page.one(by_testid("prompt-input")).send_keys(Keys.ESCAPE)
    assert page.wait_turns(1) == ["cancelled"]
    assert page.one(by_testid("send")).is_enabled()


def test_the_mode_select_changes_the_sessions_mode(page, model):
    open_client(page)
    page.new_session()
    modes = [o.get_attribute("value") for o in page.all(f"{by_testid('mode-select')} option")]
    assert {"default", "read-only", "plan"} <= set(modes)
    page.select_option("mode-select", "read-only")
    model.add(write("never.tf", "#\n"), {"text": "could not"})
    page.send("write never.tf")
    page.wait_turns(1)
    assert page.one(by_testid("tool-call")).get_attribute("data-status") == "failed"  # refused: nobody was asked
    assert not page.all(f"{by_testid('permission-dialog')}[open]")

    page.driver.refresh()  # the agent's state, not the page's
    page.connected()
    page.until(lambda: page.one(by_testid("mode-select")).get_attribute("value") == "read-only", "mode not kept")


def test_plan_entries_and_slash_commands(page, model):
    entries = [
        {"content": "Read the module", "status": "completed", "priority": "high"},
        {"content": "Write the change", "status": "in_progress", "priority": "medium"},
    ]
    model.add({"tool_calls": [{"name": "update_plan", "arguments": {"entries": entries}}]}, {"text": "planned"})
    open_client(page)
    page.new_session()
    page.send("plan it")
    page.wait_turns(1)
    shown = page.until(lambda: page.all(by_testid("plan-entry")), "no plan entries")
    assert [(e.text[-16:].strip(), e.get_attribute("data-status")) for e in shown] == [
        ("Read the module", "completed"),
        ("Write the change", "in_progress"),
    ]

    page.one(by_testid("prompt-input")).send_keys("/")
    suggestions = page.visible("#command-suggestions")
    names = [item.get_attribute("data-name") for item in suggestions.find_elements("css selector", "li")]
    assert names and all(names), names
    page.one(by_testid("prompt-input")).send_keys(names[0][:2] + Keys.TAB)
    assert page.one(by_testid("prompt-input")).get_attribute("value").startswith(f"/{names[0]} ")


def test_readable_at_400_pixels_wide(page, model):
    model.add(write("narrow.tf", "# a long line " * 20 + "\n"), {"text": "A reasonably long answer " * 10})
    page.driver.set_window_size(400, 800)
    try:
        open_client(page)
        page.new_session()
        page.send("narrow")
        page.answer_permission("allow_once")
        page.wait_turns(1)
        width = page.script("return document.documentElement.clientWidth")
        assert page.script("return document.documentElement.scrollWidth") <= width  # nothing runs off the side
        for name in ("prompt-input", "send", "new-session"):
            box = page.one(by_testid(name)).rect
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, name
        assert page.script(UNLABELLED) == []
        page.screenshot_to("narrow.png")
    finally:
        page.driver.set_window_size(1280, 900)


def test_the_server_names_the_page_in_its_log(live):
    assert f"web client: {live.base}/\n" in live.log_text()
