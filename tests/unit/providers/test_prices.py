"""The price table: bundled, dated, overridable; a call's cost from its usage."""

from __future__ import annotations

import pytest

from iac_code.config import ConfigError, Settings
from iac_code.messages import Usage
from iac_code.providers.prices import Price, price_table


def test_bundled_prices_cover_dated_snapshots_but_not_other_models():
    table = price_table(Settings())
    assert table.as_of
    assert table.price("claude-sonnet-4-5") == table.price("claude-sonnet-4-5-20250929") is not None
    assert table.price("gpt-4.1-2025-04-14") == table.price("gpt-4.1")
    assert table.price("gpt-4.1-mini") != table.price("gpt-4.1")
    assert table.price("qwen3-coder-plus") is None, "tiered by region and prompt length: no guess"
    assert table.price("my-local-model") is None


def test_the_one_hour_ttl_prices_writes_at_its_own_rate():
    five, hour = (
        price_table(Settings()).price("claude-haiku-4-5"),
        price_table(Settings(), "1h").price("claude-haiku-4-5"),
    )
    assert five is not None and hour is not None and (five.cache_write, hour.cache_write) == (1.25, 2.0)


def test_config_json_prices_override_and_add():
    prices = {
        "gpt-4.1": {"input": 1, "output": 2, "cache_read": 0.5, "cache_write": 1, "currency": "USD"},
        "qwen3-coder-plus": {"input": 4, "output": 16, "cache_read": 0.4, "cache_write": 5, "currency": "CNY"},
    }
    table = price_table(Settings(prices=prices))
    assert table.price("gpt-4.1") == Price(1.0, 2.0, 0.5, 1.0, "USD")
    assert table.price("qwen3-coder-plus") == Price(4.0, 16.0, 0.4, 5.0, "CNY")


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"input": 1}, "lacks output, cache_read, cache_write, currency"),
        ({"input": -1, "output": 1, "cache_read": 1, "cache_write": 1, "currency": "USD"}, "numbers ≥ 0"),
        ({"input": 1, "output": 1, "cache_read": 1, "cache_write": 1, "currency": "dollars"}, "ISO 4217"),
        ("cheap", "must be an object"),
    ],
)
def test_a_malformed_override_is_a_config_error(entry, says):
    with pytest.raises(ConfigError, match=says):
        price_table(Settings(prices={"m": entry}))


def test_a_call_is_billed_part_by_part():
    price = Price(input=2.0, output=8.0, cache_read=0.5, cache_write=2.5, currency="USD")
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=600_000, cache_write_tokens=300_000)
    assert price.cost(usage) == pytest.approx(0.1 * 2 + 0.6 * 0.5 + 0.3 * 2.5 + 0.1 * 8)
