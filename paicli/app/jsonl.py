"""Events as JSON lines (`--json`): one object per line, secrets masked, control characters escaped.

Used by headless mode and by an interactive `paicli plan --json` (whose screen then goes to stderr)."""

from __future__ import annotations

from typing import TextIO

from paicli.common.events import AnyEvent
from paicli.common.sanitize import json_safe
from paicli.common.whole_writes import write_whole
from paicli.tools.output import mask_secrets

# streamed text, reasoning, command output and a restarted reply's notice are too chatty for a JSON stream
# (and not in the contract): the final text is in the end event, a command's whole output in its tool_result
QUIET_IN_JSON = {"text_delta", "reasoning_delta", "command_output", "reply_restarted"}


class JsonLinesSink:
    def __init__(self, stream: TextIO, secrets: list[str]) -> None:
        self.stream = stream
        self.secrets = secrets

    def emit(self, event: AnyEvent) -> None:
        if event.event in QUIET_IN_JSON:
            return
        write_whole(self.stream, json_safe(mask_secrets(event.model_dump_json(), self.secrets)) + "\n")
