"""The reviewer: one tool-free request that scores a finished plan's outcome against its goal, 0–10.

The reply is read as leniently as a plan reply (fences, prose, trailing commas) and validated strictly:
a number from 0 to 10 and a non-blank reflection. An unreadable reply is re-asked with the exact error;
if it stays unreadable, `review` raises ReviewError: a failure to review is never taken as a pass.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from paicli.errors import PlanError, ReviewError
from paicli.llm.types import ChatModel, Message
from paicli.plan.model import Plan
from paicli.plan.parse import json_values
from paicli.plan.summary import outcome_brief


class Verdict(BaseModel):
    score: float = Field(ge=0, le=10)
    reflection: str


def parse_verdict(text: str, finish_reason: str | None) -> Verdict:
    if finish_reason == "length":
        raise ReviewError("the review was cut off at the token limit; reply with a shorter reflection")
    try:
        values = json_values(text)
    except PlanError as err:
        raise ReviewError(str(err)) from None
    objects = [v for v in values if isinstance(v, dict) and "score" in v]
    if len(objects) != 1:
        raise ReviewError('reply with exactly one JSON object {"score": <0-10>, "reflection": "..."}')
    raw = objects[0]
    try:
        score = float(raw["score"])
    except (TypeError, ValueError):
        raise ReviewError(f'"score" must be a number from 0 to 10, not {raw["score"]!r}') from None
    if not 0 <= score <= 10:
        raise ReviewError(f'"score" must be from 0 to 10, not {score:g}')
    reflection = raw.get("reflection")
    if not isinstance(reflection, str) or not reflection.strip():
        raise ReviewError('"reflection" must be a non-empty string')
    return Verdict(score=score, reflection=reflection.strip())


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
                return parse_verdict(response.content, response.finish_reason)
            except ReviewError as err:
                if attempt == self.max_reasks:
                    raise ReviewError(
                        f"the reviewer's reply could not be read ({err}); the result is unreviewed"
                    ) from None
                messages += [
                    {"role": "assistant", "content": response.content},
                    {"role": "user", "content": f"Your reply could not be used: {err}. Reply again."},
                ]
        raise AssertionError("unreachable")
