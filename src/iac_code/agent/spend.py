"""What a session has spent: its model calls' tokens and, when every call's model has a price, their cost.

The counts are summed from the history (each message a call wrote keeps that call's usage), so a loaded
session starts where it left off; the loop adds each new call as it ends. Calls of a model without a
price, or priced in another currency than the others, leave the session without a cost: a total that
leaves some calls out would be a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from iac_code.messages import Message, Usage
from iac_code.providers.prices import Price

Prices = Callable[[str], Price | None]  # model id → its price, None when unknown


@dataclass(frozen=True)
class Cost:
    amount: float
    currency: str  # ISO 4217


def no_prices(model: str) -> Price | None:
    return None


@dataclass
class Spend:
    prices: Prices = no_prices
    tokens: Usage = field(default_factory=lambda: Usage(0, 0))
    calls: int = 0
    _amount: float = 0.0
    _currency: str = ""
    _unpriced: int = 0  # calls whose cost is unknown

    @classmethod
    def of(cls, history: Iterable[Message], prices: Prices) -> Spend:
        spend = cls(prices)
        for message in history:
            if message.usage is not None:
                spend.add(message.model, message.usage)
        return spend

    def add(self, model: str, usage: Usage) -> Cost | None:
        """Count one call; returns what it cost, None when unknown."""
        self.calls += 1
        self.tokens = added(self.tokens, usage)
        price = self.prices(model)
        if price is None or (self._currency and price.currency != self._currency):
            self._unpriced += 1
            return None
        self._currency = price.currency
        cost = Cost(price.cost(usage), price.currency)
        self._amount += cost.amount
        return cost

    @property
    def cost(self) -> Cost | None:
        """The session's cost so far; None when some call's cost is unknown (or there was no call)."""
        if self._unpriced or not self._currency:
            return None
        return Cost(self._amount, self._currency)


def added(total: Usage, more: Usage) -> Usage:
    return Usage(
        total.input_tokens + more.input_tokens,
        total.output_tokens + more.output_tokens,
        total.cache_read_tokens + more.cache_read_tokens,
        total.cache_write_tokens + more.cache_write_tokens,
        total.thought_tokens + more.thought_tokens,
    )


def spend_text(spend: Spend) -> str:
    """What /cost shows."""
    tokens = spend.tokens
    uncached = tokens.input_tokens - tokens.cache_read_tokens - tokens.cache_write_tokens
    lines = [
        f"Model calls: {spend.calls:,}",
        f"Input tokens: {tokens.input_tokens:,} ({uncached:,} uncached, {tokens.cache_read_tokens:,} read from the "
        f"cache, {tokens.cache_write_tokens:,} written to it)",
        f"Output tokens: {tokens.output_tokens:,}"
        + (f" ({tokens.thought_tokens:,} reasoning)" if tokens.thought_tokens else ""),
    ]
    cost = spend.cost
    if cost is not None:
        lines.append(f"Cost: {cost.amount:.4f} {cost.currency}")
    elif spend.calls:
        lines.append('Cost: unknown (no price for the model; set one in config.json\'s "prices")')
    else:
        lines.append("Cost: nothing yet")
    return "\n".join(lines)
