"""Ctrl+C at the prompt (paicli/ui/prompt/interrupt.py), on a clock the test moves."""

from __future__ import annotations

from paicli.ui.prompt.interrupt import EXIT_WITHIN, DoubleInterrupt


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_second_ctrl_c_on_an_empty_line_within_two_seconds_exits() -> None:
    clock = Clock()
    interrupts = DoubleInterrupt(clock)
    assert not interrupts.exits("")
    clock.now += EXIT_WITHIN - 0.1
    assert interrupts.exits("")


def test_a_second_ctrl_c_after_two_seconds_only_warns_again() -> None:
    clock = Clock()
    interrupts = DoubleInterrupt(clock)
    assert not interrupts.exits("")
    clock.now += EXIT_WITHIN + 0.1
    assert not interrupts.exits("")  # the window starts again from here
    clock.now += 0.5
    assert interrupts.exits("  \n")  # only blanks: an empty line


def test_ctrl_c_on_a_line_with_text_clears_it_and_never_counts_towards_exiting() -> None:
    clock = Clock()
    interrupts = DoubleInterrupt(clock)
    assert not interrupts.exits("")
    assert not interrupts.exits("a draft")  # clears the line, and disarms
    assert not interrupts.exits("")
    assert not interrupts.exits("another draft")
    assert not interrupts.exits("")
    assert interrupts.exits("")
