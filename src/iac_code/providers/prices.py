"""What a model's tokens cost: the bundled, dated table (prices.json) and config.json's `prices` over it.

A model is priced by its exact id, or as a dated snapshot of a priced id (`claude-sonnet-4-5-20250929`,
`gpt-4.1-2025-04-14`). A model found nowhere has no price, and its calls no cost: never a guess.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from iac_code.config import ConfigError, Settings
from iac_code.providers.base import Usage
from iac_code.providers.cache_marks import CacheTtl

PER_TOKENS = 1_000_000  # prices are per million tokens
_SNAPSHOT = re.compile(r"-\d{4}-?\d{2}-?\d{2}$")
_AMOUNTS = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True)
class Price:
    """Per million tokens: uncached input, output, input read from the cache, input written to it."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    currency: str

    def cost(self, usage: Usage) -> float:
        """What one call cost. `usage.input_tokens` holds the cached parts too; each is billed at its own price."""
        uncached = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
        billed = (
            uncached * self.input
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
            + usage.output_tokens * self.output
        )
        return billed / PER_TOKENS


@dataclass(frozen=True)
class PriceTable:
    prices: dict[str, Price]
    as_of: str  # the bundled table's date

    def price(self, model: str) -> Price | None:
        name = model.strip()
        if name in self.prices:
            return self.prices[name]
        snapshot_of = _SNAPSHOT.sub("", name)
        return self.prices.get(snapshot_of) if snapshot_of != name else None


def price_table(settings: Settings, ttl: CacheTtl = "5m") -> PriceTable:
    """The bundled table with the settings' `prices` over it. Raises ConfigError for a malformed entry."""
    bundled = _bundled()
    table = {model: price for model, entry in bundled["models"].items() if (price := _price(entry, ttl)) is not None}
    overrides = settings.prices or {}
    if not isinstance(overrides, dict):
        raise ConfigError('prices in config.json must be an object: {"<model id>": {"input", "output", ...}}')
    for model, entry in overrides.items():
        table[model] = _override(model, entry)
    return PriceTable(table, bundled["as_of"])


@functools.cache
def _bundled() -> dict[str, Any]:
    text = resources.files("iac_code.providers").joinpath("prices.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _price(entry: dict[str, Any], ttl: CacheTtl) -> Price | None:
    """A bundled entry at the session's TTL; None when the table has no write price for that TTL."""
    write = entry.get("cache_write_1h") if ttl == "1h" else entry["cache_write"]
    if write is None:
        return None
    return Price(entry["input"], entry["output"], entry["cache_read"], write, entry["currency"])


def _override(model: str, entry: Any) -> Price:
    where = f"prices[{model!r}] in config.json"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be an object with {', '.join(_AMOUNTS)} and currency")
    missing = [key for key in (*_AMOUNTS, "currency") if key not in entry]
    if missing:
        raise ConfigError(f"{where} lacks {', '.join(missing)}")
    amounts = [entry[key] for key in _AMOUNTS]
    if not all(isinstance(a, int | float) and not isinstance(a, bool) and a >= 0 for a in amounts):
        raise ConfigError(f"{where}: {', '.join(_AMOUNTS)} must be numbers ≥ 0 (per million tokens)")
    currency = entry["currency"]
    if not (isinstance(currency, str) and re.fullmatch(r"[A-Z]{3}", currency)):
        raise ConfigError(f"{where}: currency must be an ISO 4217 code such as USD or CNY")
    input_, output, read, write = (float(a) for a in amounts)
    return Price(input_, output, read, write, currency)
