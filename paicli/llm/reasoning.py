"""Whether a reasoning model's thinking is sent back to it, by model family, as each one documents it.

The conversation keeps every assistant message's reasoning under `reasoning_content`; before each
request the client keeps or drops it per message, by the rule of the model the request names:

- `deepseek-reasoner`, `deepseek-r1*`: never. DeepSeek documents that `reasoning_content` in the
  input messages of deepseek-reasoner is a 400 error; the R1 distills' chat templates drop it anyway.
- other `deepseek*` (thinking mode): tool calls. The reasoning of an assistant message with tool calls
  must be sent back in every later request (else 400); other turns' reasoning is ignored.
- `kimi*`, `moonshot*`: tool calls. With thinking on, every earlier assistant tool-call message must
  carry `reasoning_content` (else 400).
- `glm*`: turn. Interleaved thinking: the reasoning goes back with the tool results; the server
  clears earlier turns' reasoning itself.
- `qwen*`, `qwq*`: turn. Qwen3's chat template keeps the reasoning of the messages after the last user
  message and drops the rest.
- anything else: never (the OpenAI format has no such field).

"turn" keeps the reasoning of the assistant messages after the last user message (the current turn);
"tool calls" keeps it on every assistant message carrying tool calls (an empty one is added where a
thinking conversation lacks it). What a server says overrides the table, and is remembered: a 400
saying reasoning "must be passed" makes the rule "always" for that model, one refusing it "never".
"""

from __future__ import annotations

import re
from enum import Enum

from paicli.llm.types import Message

FIELD = "reasoning_content"


class SendBack(Enum):
    NEVER = "never"
    TOOL_CALLS = "tool calls"
    TURN = "turn"
    ALWAYS = "always"


FAMILIES: tuple[tuple[str, SendBack], ...] = (
    (r"deepseek-(reasoner|r1)", SendBack.NEVER),
    (r"deepseek", SendBack.TOOL_CALLS),
    (r"kimi|moonshot", SendBack.TOOL_CALLS),
    (r"glm", SendBack.TURN),
    (r"qwen|qwq", SendBack.TURN),
)


def family_rule(model: str) -> SendBack:
    name = model.lower()
    return next((rule for pattern, rule in FAMILIES if re.search(pattern, name)), SendBack.NEVER)


def rule_for(model: str, *, required: bool = False, refused: bool = False) -> SendBack:
    """The family's rule, unless the server said otherwise (`required` / `refused`, remembered)."""
    if refused:
        return SendBack.NEVER
    if required:
        return SendBack.ALWAYS
    return family_rule(model)


def outgoing(messages: list[Message], rule: SendBack) -> list[Message]:
    """The messages as they are sent under `rule`; the conversation itself is never changed."""
    thinking = any(m.get("role") == "assistant" and m.get(FIELD) for m in messages)
    if not thinking:
        return messages
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    sent: list[Message] = []
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            sent.append(message)
            continue
        keep = (
            rule is SendBack.ALWAYS
            or (rule is SendBack.TOOL_CALLS and bool(message.get("tool_calls")))
            or (rule is SendBack.TURN and index > last_user)
        )
        if keep and (message.get(FIELD) or message.get("tool_calls")):
            sent.append({**message, FIELD: message.get(FIELD) or ""})
        else:
            sent.append(without_reasoning(message))
    return sent


def without_reasoning(message: Message) -> Message:
    return {key: value for key, value in message.items() if key != FIELD} if FIELD in message else message
