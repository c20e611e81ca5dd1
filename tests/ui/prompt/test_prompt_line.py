"""The toolbar's text at any width, and the mode switch behind Shift+Tab."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.formatted_text import fragment_list_to_text

from paicli.common.values import Usage
from paicli.sandbox import SandboxChoice
from paicli.ui.prompt.prompt_line import ContextMeter, ModeSwitch, PendingMode, toolbar_text

OFF = SandboxChoice("off", None)


def shown(columns: int, modes: ModeSwitch | None = None) -> str:
    usage = Usage(prompt_tokens=1234, completion_tokens=56)
    modes = modes or ModeSwitch(PendingMode(None))
    return fragment_list_to_text(
        toolbar_text("gpt-4o-mini", usage, None, modes=modes, sandbox=OFF, context=34, columns=columns)
    )


def test_the_whole_toolbar_on_a_wide_screen() -> None:
    assert shown(100) == " ask · no sandbox · gpt-4o-mini · ↑ 1,234 ↓ 56 tokens · ctx 34% · /help"


def test_a_narrow_screen_keeps_the_mode_the_tokens_and_the_context() -> None:
    assert shown(70) == " ask · no sandbox · gpt-4o-mini · ↑ 1,234 ↓ 56 tokens · ctx 34%"
    assert shown(60) == " ask · gpt-4o-mini · ↑ 1,234 ↓ 56 tokens · ctx 34%"
    assert shown(40) == " ask · ↑ 1,234 ↓ 56 tokens · ctx 34%"
    assert len(shown(40)) < 40


def test_shift_tab_cycles_and_yolo_waits_for_a_second_press() -> None:
    holder = PendingMode("ask")
    modes = ModeSwitch(holder)
    modes.press()
    assert holder.mode == "auto"
    modes.press()
    assert holder.mode == "auto" and modes.confirming
    assert shown(100, modes).startswith(" yolo runs every command unasked: Shift+Tab again confirms")
    assert shown(40, modes) == " yolo? Shift+Tab: yes · Esc: stay auto"
    modes.keep()
    modes.press()
    modes.press()
    assert holder.mode == "yolo" and not modes.confirming
    modes.press()
    assert holder.mode == "ask"


def test_the_mode_chosen_before_the_policy_exists_carries_over(tmp_path: Path) -> None:
    from paicli.policy.approval import ApprovalPolicy

    modes = ModeSwitch(PendingMode(None))
    modes.press()
    policy = ApprovalPolicy(tmp_path, mode=None)
    modes.attach(policy)
    assert policy.mode == "auto"
    modes.press()
    modes.press()
    assert policy.mode == "yolo"


def test_the_context_meter_is_the_conversation_against_the_budget() -> None:
    meter = ContextMeter(budget_tokens=1000)
    messages = [{"role": "user", "content": "x" * 1600}]
    assert 40 <= meter.percent(messages) <= 45  # about 4 characters a token, the JSON around it included
    messages.append({"role": "assistant", "content": "y" * 1600})
    assert meter.percent(messages) >= 80
