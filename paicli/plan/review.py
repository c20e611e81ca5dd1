"""The reviewer: one tool-free request that scores a finished plan's outcome against its goal, 0–10.

The reply is read as leniently as a plan reply (fences, prose, trailing commas) and validated strictly:
a number from 0 to 10 and a non-blank reflection. An unreadable reply is re-asked with the exact error
(quoting at most `REASK_EXCERPT` characters of it); if it stays unreadable, `review` raises ReviewError: a
failure to review is never taken as a pass. The reply is bounded like a plan reply (size, nesting, time)
and parsed off the event loop, so a cancel never waits for it.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from pydantic import BaseModel, Field

from paicli.common.errors import PlanError, ReviewError
from paicli.llm.types import ChatModel, Message
from paicli.plan import caps
from paicli.plan.jsonscan import json_values
from paicli.plan.model import Plan
from paicli.plan.offload import off_loop
from paicli.plan.summary import outcome_brief
from paicli.tools.output import truncate_middle

MAX_REPLY_CHARS = 200_000  # a verdict is a score and a paragraph
ONE_VERDICT = 'reply with exactly one JSON object {"score": <0-10>, "reflection": "..."}'


class Verdict(BaseModel):
    score: float = Field(ge=0, le=10)
    reflection: str


def parse_verdict(text: str, finish_reason: str | None) -> Verdict:
    if finish_reason == "length":
        raise ReviewError("the review was cut off at the token limit; reply with a shorter reflection")
    if len(text) > MAX_REPLY_CHARS:
        raise ReviewError(
            f"the review is {len(text):,} characters long, more than the limit of {MAX_REPLY_CHARS:,}; "
            "reply with a shorter reflection"
        )
    try:
        raw = _the_verdict_object(text)
    except PlanError as err:
        raise ReviewError(str(err).replace("a flat plan", "a flat verdict")) from None
    try:
        score = float(raw["score"])
    except (TypeError, ValueError):
        raise ReviewError(f'"score" must be a number from 0 to 10, not {repr(raw["score"])[:80]}') from None
    if not 0 <= score <= 10:
        raise ReviewError(f'"score" must be from 0 to 10, not {score:g}')
    reflection = raw.get("reflection")
    if not isinstance(reflection, str) or not reflection.strip():
        raise ReviewError('"reflection" must be a non-empty string')
    return Verdict(score=score, reflection=reflection.strip())


def _the_verdict_object(text: str) -> dict[str, Any]:
    """The one object with a "score"; stops looking at the second."""
    found: dict[str, Any] | None = None
    for value in json_values(text):
        if isinstance(value, dict) and "score" in value:
            if found is not None:
                break
            found = value
    else:
        if found is not None:
            return found
    raise ReviewError(ONE_VERDICT)


class Reviewer:
    def __init__(self, llm: ChatModel, *, system_prompt: str, model: str | None = None, max_reasks: int = 1) -> None:
        self.llm = llm
        self.system_prompt = system_prompt
        self.model = model
        self.max_reasks = max_reasks

    async def review(self, plan: Plan) -> Verdict:
        messages: list[Message] = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": outcome_brief(plan)},
        ]
        for attempt in range(self.max_reasks + 1):
            response = await self.llm.chat(messages, model=self.model)
            try:
                return await off_loop(partial(parse_verdict, response.content, response.finish_reason))
            except ReviewError as err:
                if attempt == self.max_reasks:
                    raise ReviewError(
                        f"the reviewer's reply could not be read ({err}); the result is unreviewed"
                    ) from None
                messages += [
                    {"role": "assistant", "content": truncate_middle(response.content, caps.REASK_EXCERPT)},
                    {"role": "user", "content": f"Your reply could not be used: {err}. Reply again."},
                ]
        raise AssertionError("unreachable")
