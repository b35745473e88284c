"""What a session costs, over ACP: `cost` on usage_update when the model has a price (config.json's
`prices`), none without one; /cost shows the tokens and the cost so far, and a session/load in a new
process goes on from them."""

from __future__ import annotations

import json

import pytest
from tests.e2e.acp.wire import answer_text, updates

PRICE = {"input": 2.0, "output": 8.0, "cache_read": 0.5, "cache_write": 2.0, "currency": "USD"}


@pytest.fixture
def priced(tmp_path) -> None:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    (config / "config.json").write_text(json.dumps({"prices": {"scripted-model": PRICE}}))


def _billed(usages: list[dict]) -> float:
    """What the turns cost at PRICE, from the usage their prompt responses reported."""
    total = 0.0
    for u in usages:
        uncached = u["inputTokens"] - u["cachedReadTokens"] - u["cachedWriteTokens"]
        total += uncached * PRICE["input"] + u["cachedReadTokens"] * PRICE["cache_read"]
        total += u["cachedWriteTokens"] * PRICE["cache_write"] + u["outputTokens"] * PRICE["output"]
    return total / 1_000_000


def _turns(agent, model, workspace, session_id: str, count: int) -> tuple[list[dict], list[dict]]:
    usages, costs = [], []
    for turn in range(count):
        model.add(
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "main.tf"}}]},
            {"text": f"Answer {turn}."},
        )
        response, seen = agent.prompt(session_id, f"Question {turn} about main.tf")
        usages.append(response["result"]["usage"])
        costs += [update.get("cost") for update in updates(seen, "usage_update")]
    return usages, costs


def test_cost_is_on_usage_update_with_a_price_and_survives_a_load(priced, spawn, model, workspace):
    (workspace / "main.tf").write_text('resource "aws_vpc" "main" {}\n' * 50)
    first = spawn()
    session_id = first.new_session(workspace)
    usages, costs = _turns(first, model, workspace, session_id, 3)
    assert len(costs) == 6 and all(cost is not None and cost["currency"] == "USD" for cost in costs)
    amounts = [cost["amount"] for cost in costs]
    assert amounts == sorted(amounts) and amounts[0] > 0, "cumulative for the session"
    assert amounts[-1] == pytest.approx(_billed(usages))
    _, seen = first.prompt(session_id, "/cost")
    shown = answer_text(seen)
    input_tokens = sum(u["inputTokens"] for u in usages)
    assert f"Input tokens: {input_tokens:,}" in shown
    assert f"{sum(u['cachedReadTokens'] for u in usages):,} read from the cache" in shown
    assert f"Output tokens: {sum(u['outputTokens'] for u in usages):,}" in shown
    assert f"Cost: {amounts[-1]:.4f} USD" in shown
    first.close()

    second = spawn()
    second.result("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    more, costs = _turns(second, model, workspace, session_id, 1)
    assert costs[-1]["amount"] == pytest.approx(_billed(usages + more)), "goes on from what it had spent"


def test_no_cost_without_a_price(spawn, model, workspace):
    (workspace / "main.tf").write_text('resource "aws_vpc" "main" {}\n')
    agent = spawn()
    session_id = agent.new_session(workspace)
    _, costs = _turns(agent, model, workspace, session_id, 1)
    assert costs == [None, None], "an unknown price is no cost, never a guess"
    _, seen = agent.prompt(session_id, "/cost")
    assert "Cost: unknown" in answer_text(seen)


def test_a_malformed_price_is_refused_naming_what_to_fix(tmp_path, spawn, workspace):
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    (config / "config.json").write_text(json.dumps({"prices": {"scripted-model": {"input": 1}}}))
    agent = spawn()
    response = agent.call("session/new", {"cwd": str(workspace), "mcpServers": []})
    assert "prices['scripted-model'] in config.json lacks output, cache_read, cache_write, currency" in json.dumps(
        response["error"]
    )
