"""The interactive approval prompt (real prompt_toolkit on a pipe), the trust prompt, /approval and /audit."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pyte
import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.vt100 import Vt100_Output

from paicli.policy.approval import ApprovalPolicy, PolicyRequest
from paicli.policy.audit import AuditLog, read_entries
from paicli.policy.rules import Rules
from paicli.tools.base import ApprovalDecision, ApprovalRequest, ToolContext
from paicli.trust import TrustRequest
from paicli.ui.prompt.approval_prompt import (
    ApprovalPrompt,
    approval_command,
    audit_command,
    confirm_trust,
    question,
)

REQUEST = PolicyRequest(
    task_id="task_2", tool="execute_command", summary="rm -r build", reason="rm changes files", always="`rm …` commands"
)


@pytest.fixture
def keyboard() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe:
        yield pipe


async def answer(keyboard: PipeInput, keys: str, prompt: ApprovalPrompt | None = None) -> ApprovalDecision:
    prompt = prompt or ApprovalPrompt(input=keyboard, output=DummyOutput())
    keyboard.send_text(keys)
    return await asyncio.wait_for(prompt(REQUEST), 10)


@pytest.mark.parametrize(
    ("keys", "allowed", "how", "reason"),
    [
        ("y", True, "user", ""),
        ("Y", True, "user", ""),
        ("a", True, "session", ""),
        ("qwe y", True, "user", ""),  # other keys do nothing
        ("n\r", False, "user", ""),
        ("nuse make clean instead\r", False, "user", "use make clean instead"),
        ("nhalf typed\x1b", False, "user", ""),  # Esc while typing the reason: refused, no reason
        ("\x04", False, "user", ""),
    ],
)
async def test_keys_answer_the_question(keyboard: PipeInput, keys: str, allowed: bool, how: str, reason: str) -> None:
    decision = await answer(keyboard, keys)
    assert (decision.allowed, decision.how, decision.reason) == (allowed, how, reason)


async def test_escape_refuses_and_cancels_the_turn(keyboard: PipeInput) -> None:
    cancelled: list[bool] = []
    prompt = ApprovalPrompt(input=keyboard, output=DummyOutput(), on_cancel=lambda: cancelled.append(True))
    decision = await answer(keyboard, "\x1b", prompt)
    assert not decision.allowed and cancelled == [True]


async def test_the_live_view_is_paused_around_the_question(keyboard: PipeInput) -> None:
    calls: list[str] = []
    prompt = ApprovalPrompt(
        input=keyboard, output=DummyOutput(), pause=lambda: calls.append("pause"), resume=lambda: calls.append("resume")
    )
    await answer(keyboard, "y", prompt)
    assert calls == ["pause", "resume"]


async def test_parallel_questions_are_asked_one_at_a_time(keyboard: PipeInput) -> None:
    open_questions: list[int] = []
    active = 0

    def pause() -> None:
        nonlocal active
        active += 1
        open_questions.append(active)

    def resume() -> None:
        nonlocal active
        active -= 1

    prompt = ApprovalPrompt(input=keyboard, output=DummyOutput(), pause=pause, resume=resume)
    first = asyncio.create_task(prompt(REQUEST))
    second = asyncio.create_task(prompt(REQUEST))
    for _ in range(2):
        await asyncio.sleep(0.2)
        keyboard.send_text("y")
    assert all(d.allowed for d in await asyncio.wait_for(asyncio.gather(first, second), 10))
    assert open_questions == [1, 1]


async def test_questions_queued_in_the_policy_are_counted_and_shown(keyboard: PipeInput, tmp_path: Path) -> None:
    policy = ApprovalPolicy(tmp_path, mode="ask")
    prompt = ApprovalPrompt(input=keyboard, output=DummyOutput(), queued=lambda: policy.waiting)
    ctx = ToolContext(tmp_path, task_id="t1", approve=prompt)
    asked = [asyncio.create_task(policy.decide("execute_command", {"command": f"rm -r d{n}"}, ctx)) for n in range(3)]
    await asyncio.sleep(0.2)
    assert prompt.waiting == 2
    assert "· 2 more waiting" in "".join(fragment[1] for fragment in question(REQUEST, None, prompt.waiting))
    for _ in range(3):
        keyboard.send_text("y")
        await asyncio.sleep(0.2)
    assert all(r.decision.value == "approved_by_user" for r in await asyncio.wait_for(asyncio.gather(*asked), 10))
    assert prompt.waiting == 0
    assert "waiting" not in "".join(fragment[1] for fragment in question(REQUEST, "yes", 2))  # answered: no count


async def test_through_the_policy_always_is_remembered(keyboard: PipeInput, tmp_path: Path) -> None:
    prompt = ApprovalPrompt(input=keyboard, output=DummyOutput())
    policy = ApprovalPolicy(tmp_path, mode="ask")
    ctx = ToolContext(tmp_path, task_id="t1", approve=prompt)
    keyboard.send_text("a")
    first = await asyncio.wait_for(policy.decide("execute_command", {"command": "make build -j2"}, ctx), 10)
    second = await asyncio.wait_for(policy.decide("execute_command", {"command": "make build -j4"}, ctx), 10)
    assert first.decision.value == "approved_by_user" and second.decision.value == "approved_by_session"


def text_of(request: PolicyRequest, chosen: str | None = None) -> str:
    return "".join(fragment[1] for fragment in question(request, chosen))


def test_the_question_shows_command_task_reason_and_what_always_means() -> None:
    text = text_of(REQUEST)
    assert "execute_command" in text and "task task_2" in text and "rm -r build" in text
    assert "why: rm changes files" in text and "always allow `rm …` commands this session" in text
    assert text_of(REQUEST, "yes").endswith("yes\n")


async def test_the_question_says_what_the_command_starts(keyboard: PipeInput, tmp_path: Path) -> None:
    """The classifier's list of what would run reaches the person deciding, and the audit."""
    asked: list[PolicyRequest] = []

    async def remember(request: ApprovalRequest) -> ApprovalDecision:
        assert isinstance(request, PolicyRequest)
        asked.append(request)
        return ApprovalDecision(allowed=False, how="user")

    policy = ApprovalPolicy(tmp_path, mode="ask", audit=AuditLog(tmp_path / "audit", workspace=tmp_path))
    ctx = ToolContext(tmp_path, task_id="t1", approve=remember)
    await policy.decide("execute_command", {"command": "find . -name '*.o' | xargs rm"}, ctx)
    await policy.decide("execute_command", {"command": "echo ${X:-`touch p`}"}, ctx)
    assert asked[0].programs == ("find", "xargs", "rm") and "starts: find, xargs, rm" in text_of(asked[0])
    assert "starts at least: touch" in text_of(asked[1]) and "cannot tell what this runs" in text_of(asked[1])
    # the audit records the same list beside each decision
    await policy.admit("execute_command", {"command": "ls | wc -l"}, ctx)
    [entry] = read_entries(tmp_path / "audit", 1)
    assert entry["programs"] == ["ls", "wc"] and entry["decision"] == "allowed"


def test_escape_sequences_and_bidi_tricks_are_shown_not_obeyed() -> None:
    sneaky = REQUEST.model_copy(update={"summary": "ls\x1b[2K\r\x1b[1Arm -rf build \u202e", "opaque": True})
    text = text_of(sneaky)
    assert "\x1b" not in text and "\u202e" not in text and "\r" not in text
    assert "ls\\x1b[2K\\x0d\\x1b[1Arm -rf build \\u202e" in text
    assert "cannot tell what this runs" in text


def test_trust_prompt_needs_an_explicit_yes(keyboard: PipeInput) -> None:
    request = TrustRequest(Path("/r/.paicli/config.toml"), {"base_url": "http://x/v1"})
    keyboard.send_text("y\r")
    assert confirm_trust(request, input=keyboard, output=DummyOutput()) is True
    keyboard.send_text("\r")
    assert confirm_trust(request, input=keyboard, output=DummyOutput()) is False
    keyboard.send_text("yes please\r")
    assert confirm_trust(request, input=keyboard, output=DummyOutput()) is False


def test_approval_command_shows_and_switches_the_mode(tmp_path: Path) -> None:
    policy = ApprovalPolicy(tmp_path, rules=Rules(["pytest"], ["git push"]))
    policy.grants.add("cmd:make build")
    shown = approval_command(policy, "")
    assert "approval mode: ask" in shown and "allow rules: pytest" in shown and "deny rules: git push" in shown
    assert "always allowed this session: make build" in shown
    assert "yolo" in approval_command(policy, "YOLO") and policy.mode == "yolo"
    assert approval_command(policy, "sometimes").startswith("usage")
    assert policy.mode == "yolo"
    assert "not available" in approval_command(None, "")


def test_audit_command_lists_the_latest_entries(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    assert "no audit entries yet" in audit_command(tmp_path, "")
    for n in range(3):
        log.record(tool="execute_command", arguments={"command": f"echo {n}\x1b[31m"}, decision="allowed")
    shown = audit_command(tmp_path, "2", log=log).splitlines()
    assert len(shown) == 2 and shown[-1].endswith("echo 2\\x1b[31m → allowed")
    assert audit_command(tmp_path, "-1").startswith("usage")
    log.last_error = "cannot write the audit log in /x: Permission denied"
    assert "warning: cannot write" in audit_command(tmp_path, "", log=log)


async def test_a_question_draws_what_is_above_it_and_leaves_only_itself_behind(keyboard: PipeInput) -> None:
    screen = io.StringIO()
    output = Vt100_Output(screen, lambda: Size(rows=24, columns=80), term="xterm")
    prompt = ApprovalPrompt(input=keyboard, output=output)
    drawn: list[tuple[int, int]] = []

    def above(columns: int, rows: int) -> str:
        drawn.append((columns, rows))
        return "\x1b[1mRunning plan\x1b[0m · 3 tasks"

    with prompt.attached(pause=lambda: None, resume=lambda: None, on_cancel=lambda: None, above=above):
        keyboard.send_text("nnot now\r")
        decision = await asyncio.wait_for(prompt(REQUEST), 10)
    assert not decision.allowed and decision.reason == "not now"
    assert drawn and drawn[0][0] == 80 and drawn[0][1] < 24  # the rows the question leaves free
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    record = text[text.rindex("╭ approve") :]  # printed once the application is gone
    assert "Running plan" in text and "Running plan" not in record
    assert "╰ no" in record and "reason for the model (optional, Enter to send): not now" in record


PAYLOAD = "# run the unit tests" + " ." * 1500 + "\n" * 40 + "rm -rf build"  # finding 4 of issue 31


def screen_of(rows: int = 24, columns: int = 80) -> tuple[io.StringIO, Vt100_Output]:
    screen = io.StringIO()
    return screen, Vt100_Output(screen, lambda: Size(rows=rows, columns=columns), term="xterm")


def shown_now(screen: io.StringIO, rows: int = 24, columns: int = 80) -> str:
    """What a terminal of that size displays after everything written so far."""
    terminal = pyte.Screen(columns, rows)
    pyte.Stream(terminal).feed(screen.getvalue())
    return "\n".join(line.rstrip() for line in terminal.display)


def plain(screen: io.StringIO) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())


async def ask_long(keyboard: PipeInput, keys: str, summary: str = PAYLOAD) -> tuple[ApprovalDecision, str]:
    screen, output = screen_of()
    prompt = ApprovalPrompt(input=keyboard, output=output)
    keyboard.send_text(keys)
    request = REQUEST.model_copy(update={"summary": summary})
    return await asyncio.wait_for(prompt(request), 10), plain(screen)


@pytest.mark.parametrize("early", ["y", "Y", "a", "A", "yyy"])
async def test_yes_waits_until_the_last_page_of_a_long_command_was_shown(keyboard: PipeInput, early: str) -> None:
    """The payload sat below `… 21 more lines …`: now y and a do nothing until every page has been on screen."""
    screen, output = screen_of()
    prompt = ApprovalPrompt(input=keyboard, output=output)
    asked = asyncio.ensure_future(prompt(REQUEST.model_copy(update={"summary": PAYLOAD})))
    await asyncio.sleep(0.3)
    keyboard.send_text(early)
    await asyncio.sleep(0.5)
    now = shown_now(screen)
    assert not asked.done() and "41 rm -rf build" not in now
    assert "y/a once you have seen the last page" in now and "rows 1–" in now
    keyboard.send_text(" " * 30 + "y")
    decision = await asyncio.wait_for(asked, 10)
    assert decision.allowed and decision.how == "user"
    text = plain(screen)
    assert "the end" in text and "41 rm -rf build" in text and "41 lines, 3,072 characters" in text


async def test_yes_on_the_first_page_alone_never_answers(keyboard: PipeInput) -> None:
    screen, output = screen_of()
    prompt = ApprovalPrompt(input=keyboard, output=output)
    keyboard.send_text("yaYA\r")
    asked = asyncio.ensure_future(prompt(REQUEST.model_copy(update={"summary": PAYLOAD})))
    await asyncio.sleep(0.5)
    assert not asked.done()  # still asking
    assert "41 rm -rf build" not in shown_now(screen)  # the payload is further down, not yet shown
    keyboard.send_text("n\r")
    decision = await asyncio.wait_for(asked, 10)
    assert not decision.allowed


@pytest.mark.parametrize("keys", ["n\r", "\x1b", "\x04", "  b n\r"])
async def test_no_and_escape_answer_on_any_page(keyboard: PipeInput, keys: str) -> None:
    decision, _ = await ask_long(keyboard, keys)
    assert not decision.allowed


async def test_every_row_of_a_long_command_is_left_in_the_scrollback(keyboard: PipeInput) -> None:
    decision, text = await ask_long(keyboard, " " * 30 + "y")
    record = text[text.rindex("╭ approve") :]
    assert decision.allowed and record.rstrip().endswith("╰ yes")
    assert all(f"{number:>2} " in record for number in range(1, 42))
    assert record.count(" .") >= 1500  # every dot, on wrapped rows


async def test_a_short_command_answers_at_once(keyboard: PipeInput) -> None:
    decision, text = await ask_long(keyboard, "y", summary="rm -r build\nrm -r dist")
    assert decision.allowed and "1 rm -r build ⏎" in text and "2 rm -r dist" in text and "rows 1–" not in text


async def test_a_command_too_large_to_read_is_refused_unasked(keyboard: PipeInput) -> None:
    for summary in ("echo " + "x" * 20_000, "rm a\n" * 500):
        decision, text = await ask_long(keyboard, "y", summary=summary)
        assert not decision.allowed and decision.how == "policy" and "not asked" in decision.reason
        assert "╭ approve" not in text
