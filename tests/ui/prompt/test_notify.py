"""The plan notifications: what is written, when, and that a message cannot break out of OSC 9."""

from __future__ import annotations

from paicli.ui.prompt.notify import Notifier, notification


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_notification_is_a_bell_and_an_osc9_without_control_characters() -> None:
    assert notification("plan completed") == "\a\x1b]9;plan completed\x07"
    assert notification("evil\x07\x1b]0;title\x1b\\ text") == "\a\x1b]9;evil ]0;title \\ text\x07"


def test_only_a_plan_older_than_the_threshold_notifies_and_review_time_does_not_count() -> None:
    written: list[str] = []
    clock = Clock()
    notify = Notifier(written.append, enabled=True, after=10.0, clock=clock)
    clock.now += 5
    assert not notify("plan completed")
    clock.now += 6
    with notify.reviewing():
        clock.now += 60  # the user reads the plan for a minute
    assert written == [notification("plan ready for review")]
    clock.now += 3
    assert not notify("plan completed")  # 3 s of running since the review
    clock.now += 8
    assert notify("plan completed")
    assert written[-1] == notification("plan completed")


def test_notify_false_never_writes() -> None:
    written: list[str] = []
    clock = Clock()
    notify = Notifier(written.append, enabled=False, after=0.0, clock=clock)
    clock.now += 100
    with notify.reviewing():
        pass
    assert not notify("plan failed")
    assert written == []
