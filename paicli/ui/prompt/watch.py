"""The terminal while a turn or a plan runs: ESC or Ctrl-C cancels it, and an approval question takes
the keyboard (and pauses what draws on the screen) while it asks."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

from paicli.ui.prompt.approval_prompt import Above, ApprovalPrompt
from paicli.ui.prompt.keys import CancelKeys


@contextlib.contextmanager
def cancel_keys(
    cancel: Callable[[], None],
    approval: ApprovalPrompt,
    *,
    before_question: Sequence[Callable[[], None]] = (),
    after_question: Sequence[Callable[[], None]] = (),
    above: Above | None = None,
) -> Iterator[CancelKeys]:
    """Watches the keyboard for ESC and Ctrl-C (and SIGINT) until the block ends; yields the watcher,
    whose `typeahead` holds what was typed meanwhile. `above` is drawn over an approval question."""
    keys = CancelKeys(cancel)

    def pause() -> None:
        for step in before_question:
            step()
        keys.pause()

    def resume() -> None:
        keys.resume()
        for step in after_question:
            step()

    with keys, approval.attached(pause=pause, resume=resume, on_cancel=cancel, above=above):
        yield keys
