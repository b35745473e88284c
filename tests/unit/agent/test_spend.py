"""A session's spend: summed from the usage its messages keep; a cost only when every call is priced."""

from __future__ import annotations

import pytest

from iac_code.agent.spend import Spend, spend_text
from iac_code.messages import Message, Usage
from iac_code.providers.prices import Price

USD = Price(1.0, 2.0, 0.1, 1.25, "USD")
CNY = Price(1.0, 2.0, 0.1, 1.25, "CNY")
PRICES = {"a": USD, "b": CNY}


def _answer(model: str, usage: Usage) -> Message:
    return Message(role="assistant", text="ok", usage=usage, model=model)


def test_spend_is_summed_from_the_history_and_goes_on():
    history = [Message(role="user", text="q"), _answer("a", Usage(1_000_000, 0, cache_read_tokens=500_000))]
    spend = Spend.of(history, PRICES.get)
    spend.add("a", Usage(0, 1_000_000))
    assert spend.tokens == Usage(1_000_000, 1_000_000, 500_000, 0, 0) and spend.calls == 2
    assert spend.cost is not None and spend.cost.amount == pytest.approx(0.5 + 0.05 + 2.0)


@pytest.mark.parametrize("other", ["unknown-model", "b"])
def test_an_unpriced_call_or_another_currency_leaves_no_cost(other):
    spend = Spend(PRICES.get)
    spend.add("a", Usage(10, 10))
    spend.add(other, Usage(10, 10))
    assert spend.cost is None
    assert "Cost: unknown" in spend_text(spend)


def test_usage_survives_the_store_round_trip():
    message = _answer("a", Usage(12, 3, cache_read_tokens=8, thought_tokens=1))
    data = message.to_dict()
    assert data["usage"] == {"input_tokens": 12, "output_tokens": 3, "cache_read_tokens": 8, "thought_tokens": 1}
    assert Message.from_dict(data) == message
