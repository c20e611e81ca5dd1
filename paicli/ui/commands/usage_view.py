"""What `/usage` shows: the session's tokens per model and per plan, their cost when prices are
configured, and what the provider's prompt cache took (and saved, with a `cached_input` price).

The figures are the sums of the `usage` events of this session (each model request's usage as the
server reported it, or estimated), so they match what `--json` would have written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from paicli.app.figures import ESTIMATED_NOTE, arrows
from paicli.common.sanitize import one_line
from paicli.common.values import ModelTokens, Usage
from paicli.llm.price import Price, cost_of

PLAN_LABEL = 48  # characters of a plan's goal shown as its label


@dataclass(frozen=True)
class PlanUsage:
    """The tokens of one plan run in this session."""

    goal: str
    usage: Usage
    plan_id: str | None = None


def format_cost(cost: float) -> str:
    """A price in the user's currency (no symbol: the config does not say which): 1.23, 0.0042."""
    return f"{cost:,.2f}" if cost >= 1 else f"{cost:.4f}"


def usage_report(session: Usage, plans: Sequence[PlanUsage], prices: Mapping[str, Price]) -> list[str]:
    lines = [f"session: {arrows(session)} tokens" + ESTIMATED_NOTE * session.estimated]
    lines += _by_model(session.by_model, prices)
    if plans:
        lines += _by_plan(session, plans, prices)
    cost = cost_of(session, prices) if prices and session.total else None
    if cost is not None:
        lines.append(f"cost: {format_cost(cost)} (at the configured prices)")
    if session.cached_tokens:
        lines.append(_caching(session, prices))
    return lines


def _by_model(models: Mapping[str, ModelTokens], prices: Mapping[str, Price]) -> list[str]:
    if not models:
        return []
    width = max(len(name) for name in models)
    lines = []
    for name, tokens in sorted(models.items()):
        line = f"  {name:<{width}}  ↑ {tokens.prompt_tokens:,} ↓ {tokens.completion_tokens:,}"
        if tokens.cached_tokens:
            line += f" ({tokens.cached_tokens:,} cached)"
        if name in prices:
            cost = prices[name].cost(tokens.prompt_tokens, tokens.completion_tokens, tokens.cached_tokens)
            line += f" · {format_cost(cost)}"
        lines.append(line)
    return lines


def _by_plan(session: Usage, plans: Sequence[PlanUsage], prices: Mapping[str, Price]) -> list[str]:
    rows = []
    for plan in plans:
        label = one_line(plan.goal, limit=PLAN_LABEL) + (f" ({plan.plan_id})" if plan.plan_id else "")
        cost = cost_of(plan.usage, prices) if prices and plan.usage.total else None
        rows.append((label, arrows(plan.usage) + (f" · {format_cost(cost)}" if cost is not None else "")))
    prompt = session.prompt_tokens - sum(plan.usage.prompt_tokens for plan in plans)
    completion = session.completion_tokens - sum(plan.usage.completion_tokens for plan in plans)
    if prompt or completion:
        outside = Usage(prompt_tokens=prompt, completion_tokens=completion, estimated=session.estimated)
        rows.append(("chat and the rest", arrows(outside)))
    width = max(len(label) for label, _ in rows)
    return ["plans:", *(f"  {label:<{width}}  {figures}" for label, figures in rows)]


def _caching(session: Usage, prices: Mapping[str, Price]) -> str:
    share = session.cached_tokens / session.prompt_tokens if session.prompt_tokens else 0.0
    line = (
        f"prompt caching: {session.cached_tokens:,} of {session.prompt_tokens:,} prompt tokens came from the"
        f" provider's cache ({share:.0%})"
    )
    cached = {name: t.cached_tokens for name, t in session.by_model.items() if t.cached_tokens}
    if sum(cached.values()) == session.cached_tokens and all(
        name in prices and prices[name].cached_input is not None for name in cached
    ):
        saved = sum(prices[name].saved(tokens) for name, tokens in cached.items())
        return line + f" · saved {format_cost(saved)} at the configured prices"
    return line + ' · a cached_input price in [prices."MODEL"] shows what that saved'
