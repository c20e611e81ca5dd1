"""What the server behind one client is known to accept, learned from its replies.

One object per client (`LLMClient.capabilities`), shared by everything that sends through it: the
client drops request fields the server rejected (`stream_options`, `temperature`, `max_tokens` renamed
to `max_completion_tokens`), the planner remembers which structured-output mode a model accepted, so
the next plan of the session does not pay for the refusals again. Nothing is written to disk: a server
can change between sessions.
"""

from __future__ import annotations

from collections.abc import Callable


class Capabilities:
    def __init__(self, default_model: Callable[[], str]) -> None:
        self._default_model = default_model  # the model a request names when it names none (`/model` changes it)
        self._rejected_fields: set[str] = set()
        self._plan_formats: dict[str, int] = {}  # model → index of the structured-output mode that worked

    def for_model(self, model: str | None) -> Capabilities:
        """The same knowledge (shared, not copied) as seen by requests that name `model` when they name
        none: how a wrapper routing to its own model (paicli/llm/routed.py) remembers for that model."""
        if model is None:
            return self
        view = Capabilities(lambda: model)
        view._rejected_fields, view._plan_formats = self._rejected_fields, self._plan_formats
        return view

    def accepts(self, field: str) -> bool:
        """False once the server has rejected the request field `field`."""
        return field not in self._rejected_fields

    def reject(self, field: str) -> bool:
        """Records that the server rejects `field`; False if that was known already."""
        if field in self._rejected_fields:
            return False
        self._rejected_fields.add(field)
        return True

    def plan_format(self, model: str | None = None) -> int:
        """The structured-output mode (an index into the planner's modes) to try first for `model`."""
        return self._plan_formats.get(model or self._default_model(), 0)

    def remember_plan_format(self, index: int, model: str | None = None) -> None:
        self._plan_formats[model or self._default_model()] = index
