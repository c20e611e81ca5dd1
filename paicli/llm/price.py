"""What tokens cost: a price per model (`[prices."NAME"]` in the config) and the cost of a usage.

Prices are per million tokens, in whatever currency the user writes them in. A cost is known only when
every model that was used has a price: a partial sum would look like the whole bill.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from paicli.common.values import Usage

PER = 1_000_000  # prices are per million tokens


class Price(BaseModel):
    """`input = 0.27, output = 1.10`: per million prompt and completion tokens (numbers, not negative;
    `output` 0 when not given). `cached_input`: per million prompt tokens served from the provider's
    cache; not given, they cost `input` (and what the cache saved is not known)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(0.0, ge=0, allow_inf_nan=False)
    cached_input: float | None = Field(None, ge=0, allow_inf_nan=False)

    def cost(self, prompt_tokens: int, completion_tokens: int = 0, cached_tokens: int = 0) -> float:
        """`cached_tokens` are part of `prompt_tokens` (as providers count them)."""
        return (prompt_tokens * self.input + completion_tokens * self.output) / PER - self.saved(cached_tokens)

    def saved(self, cached_tokens: int) -> float:
        """What the cache saved on `cached_tokens` prompt tokens (0 without a `cached_input` price)."""
        if self.cached_input is None:
            return 0.0
        return cached_tokens * (self.input - self.cached_input) / PER


def cost_of(usage: Usage, prices: Mapping[str, Price]) -> float | None:
    """The price of `usage`, from its split by model; None when some of it cannot be priced (a model
    without a price, or tokens not attributed to any model)."""
    if not usage.by_model:
        return None if usage.total else 0.0
    attributed = sum(tokens.prompt_tokens + tokens.completion_tokens for tokens in usage.by_model.values())
    if attributed != usage.total or any(name not in prices for name in usage.by_model):
        return None
    return sum(
        prices[name].cost(t.prompt_tokens, t.completion_tokens, t.cached_tokens) for name, t in usage.by_model.items()
    )
