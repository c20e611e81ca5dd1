"""What the server behind one client is known to accept, per model, learned from its replies.

One object per client (`LLMClient.capabilities`), shared by everything that sends through it: the client
drops request fields a model's server rejected (`stream_options`, `temperature`, `parallel_tool_calls`,
`max_tokens` renamed to `max_completion_tokens`) and sends reasoning back as the server wants it; the
planner skips the structured-output modes a model refused and starts with the one that worked. The names
of what can be rejected are listed in `paicli.llm.rejections`.

With a `CapabilityStore`, what is learned is also remembered across runs (keyed by base URL and model,
with a time stamp; see paicli/llm/capability_store.py). Without one it lasts as long as the client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from paicli.llm.capability_store import MAX_SAMPLES, CapabilityStore, Learned, Sample


class Capabilities:
    def __init__(self, default_model: Callable[[], str], *, base_url: str = "", store: CapabilityStore | None = None):
        self._default_model = default_model  # the model a request names when it names none (`/model` changes it)
        self.base_url = base_url
        self.store = store
        self._models: dict[str, Learned] = {}  # shared with every view made by `for_model`

    def for_model(self, model: str | None) -> Capabilities:
        """The same knowledge (shared, not copied) as seen by requests that name `model` when they name
        none: how a wrapper routing to its own model remembers for that model (paicli/llm/routed.py)."""
        if model is None:
            return self
        view = Capabilities(lambda: model, base_url=self.base_url, store=self.store)
        view._models = self._models
        return view

    def learned(self, model: str | None = None) -> Learned:
        """What is known of `model` (the default model when None): loaded from the store the first time."""
        name = model or self._default_model()
        if name not in self._models:
            stored = self.store.load(self.base_url, name) if self.store is not None else None
            self._models[name] = stored or Learned()
        return self._models[name]

    def accepts(self, field: str, model: str | None = None) -> bool:
        """False once the server has rejected `field` (a capability name, paicli.llm.rejections) for `model`."""
        return field not in self.learned(model).rejected

    def reject(self, field: str, model: str | None = None) -> bool:
        """Records that the server rejects `field` for `model`; False if that was known already."""
        learned = self.learned(model)
        if field in learned.rejected:
            return False
        learned.rejected.add(field)
        self._save(model, learned)
        return True

    def allow(self, field: str, model: str | None = None) -> None:
        """Forgets a rejection (a probe found the field accepted after all)."""
        learned = self.learned(model)
        if field in learned.rejected:
            learned.rejected.discard(field)
            self._save(model, learned)

    def plan_format(self, model: str | None = None) -> int:
        """The structured-output mode (an index into the planner's modes) to try first for `model`."""
        return self.learned(model).plan_format or 0

    def remember_plan_format(self, index: int, model: str | None = None) -> None:
        learned = self.learned(model)
        if (learned.plan_format or 0) != index:  # the first mode working is the default: nothing to write
            learned.plan_format = index
            self._save(model, learned)

    def samples(self, kind: str, model: str | None = None) -> list[Sample]:
        """What tasks of `kind` (a task type) cost against their estimates on this server and `model`."""
        return list(self.learned(model).calibration.get(kind, ()))

    def calibrate(self, samples: Mapping[str, Sequence[Sample]], model: str | None = None) -> None:
        """Adds samples per task type (the latest MAX_SAMPLES of each are kept), written once."""
        learned = self.learned(model)
        for kind, new in samples.items():
            if new:
                learned.calibration[kind] = [*learned.calibration.get(kind, []), *new][-MAX_SAMPLES:]
        if any(samples.values()):
            self._save(model, learned)

    def _save(self, model: str | None, learned: Learned) -> None:
        if self.store is not None:
            self.store.save(self.base_url, model or self._default_model(), learned)
