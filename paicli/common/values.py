"""The values the layers share: tokens used, model requests retried, what a run is expected to cost.

The client counts them (paicli.llm), events carry them (paicli.common.events), the plan and the front ends sum and
show them. The bottom layer: imports only the standard library and pydantic.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

__all__ = ["Estimate", "ModelEstimate", "ModelTokens", "Retries", "Usage"]


class ModelTokens(BaseModel):
    """The tokens of the requests sent to one model (a value of `Usage.by_model`); `cached_tokens`, the
    prompt tokens its provider served from its cache, is written out only when there are any."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: ModelTokens) -> ModelTokens:
        return ModelTokens(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )

    @model_serializer(mode="wrap")
    def _cached_when_any(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.cached_tokens:
            data.pop("cached_tokens", None)
        return data


class Usage(BaseModel):
    """Tokens used. `by_model` splits them by the model each request named (the client fills it in for
    its own requests). Also `cached_tokens` (prompt tokens the provider served from its cache) and
    `estimated` (true when any part of the total was counted by paicli's estimate, paicli/llm/tokens.py,
    because the server reported none; kept through sums). Each is written out only when it says something."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    by_model: dict[str, ModelTokens] = Field(default_factory=dict)
    cached_tokens: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def of_model(self, model: str) -> Usage:
        """These tokens, all counted for `model`."""
        tokens = ModelTokens(
            prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens, cached_tokens=self.cached_tokens
        )
        return self.model_copy(update={"by_model": {model: tokens}})

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            by_model=_merged(self.by_model, other.by_model),
            cached_tokens=self.cached_tokens + other.cached_tokens,
            estimated=self.estimated or other.estimated,
        )

    @model_serializer(mode="wrap")
    def _additions_when_known(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("by_model", "cached_tokens", "estimated"):
            if not getattr(self, key):
                data.pop(key, None)
        return data


class Retries(BaseModel):
    """Model requests retried, by kind, and the seconds they spent waiting (summed over requests that wait
    side by side); a plan's tally is in `plan_finished`. `rate_limited`: 429/503, retried on a time
    budget; `errors`: connection failures, 408 and other 5xx; `streams`: a stream that broke off, asked
    again; `timeouts`: no answer within `read_timeout`."""

    rate_limited: int = 0
    errors: int = 0
    streams: int = 0
    timeouts: int = 0
    waited_seconds: float = 0.0

    @property
    def total(self) -> int:
        return self.rate_limited + self.errors + self.streams + self.timeouts

    def __add__(self, other: Retries) -> Retries:
        return Retries(
            rate_limited=self.rate_limited + other.rate_limited,
            errors=self.errors + other.errors,
            streams=self.streams + other.streams,
            timeouts=self.timeouts + other.timeouts,
            waited_seconds=round(self.waited_seconds + other.waited_seconds, 3),
        )


class ModelEstimate(BaseModel):
    """What the requests expected of one model come to (a value of `Estimate.by_model`)."""

    requests: int = 0
    prompt_tokens: int = 0

    def __add__(self, other: ModelEstimate) -> ModelEstimate:
        return ModelEstimate(
            requests=self.requests + other.requests, prompt_tokens=self.prompt_tokens + other.prompt_tokens
        )


class Estimate(BaseModel):
    """Model requests and prompt tokens expected before something runs (see paicli/plan/estimate.py).

    Additions, written out only when known: `by_model` (the same split by model), `task_models` (task
    id → the model that runs it; a direct action has none) and `cost` (the prompt tokens priced, only when
    a price is configured for every model in `by_model`; completion tokens are not estimated), and how sure
    it is: `prompt_tokens_low` to `prompt_tokens_high`, the range the prompt tokens are expected in, and
    `uncalibrated`, how many of its model-run tasks are of a type not yet measured on this server and model
    (paicli/plan/calibration.py)."""

    requests: int = 0
    prompt_tokens: int = 0
    by_model: dict[str, ModelEstimate] = Field(default_factory=dict)
    task_models: dict[str, str] = Field(default_factory=dict)
    cost: float | None = None
    prompt_tokens_low: int = 0
    prompt_tokens_high: int = 0
    uncalibrated: int = 0

    def __add__(self, other: Estimate) -> Estimate:
        """The sum; its cost is known only when both are."""
        cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        return Estimate(
            requests=self.requests + other.requests,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            by_model=_merged(self.by_model, other.by_model),
            task_models={**self.task_models, **other.task_models},
            cost=cost,
            prompt_tokens_low=self.prompt_tokens_low + other.prompt_tokens_low,
            prompt_tokens_high=self.prompt_tokens_high + other.prompt_tokens_high,
            uncalibrated=self.uncalibrated + other.uncalibrated,
        )

    @model_serializer(mode="wrap")
    def _additions_when_known(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.prompt_tokens_high:  # no range: an estimate made before ranges, or of nothing
            for key in ("prompt_tokens_low", "prompt_tokens_high", "uncalibrated"):
                data.pop(key, None)
        return {
            key: value
            for key, value in data.items()
            if key in ("requests", "prompt_tokens", "prompt_tokens_low", "prompt_tokens_high", "uncalibrated")
            or value not in (None, {})
        }


_Summable = TypeVar("_Summable", ModelTokens, ModelEstimate)


def _merged(a: dict[str, _Summable], b: dict[str, _Summable]) -> dict[str, _Summable]:
    merged = dict(a)
    for name, value in b.items():
        merged[name] = merged[name] + value if name in merged else value
    return merged
