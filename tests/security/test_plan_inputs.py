"""Plans are untrusted input (issue 21) and trust follows the file (issue 19, class 8), end to end.

Every test runs the real `paicli` in a subprocess, under a 1 GB address-space limit (so reading
/dev/zero or a sparse gigabyte would fail with MemoryError instead of passing slowly), against the fake
model server, and checks what a user sees: one clear line (and `plan_finished` FAILED where a plan was
under way), no traceback, nothing written outside the workspace, and a prompt exit on SIGTERM.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Finished, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, has_tool_result
from tests.plan_script import PLANNER, REVIEWER, plan_json, script_summary, system_is, task_is

MEMORY_LIMIT = 1 << 30
GONE_WITHIN = 10  # seconds a SIGTERMed paicli may take to exit (it takes well under one)


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def command(workspace: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "paicli", "-C", str(workspace), *args]


def run_limited(workspace: Path, env: dict[str, str], *args: str, timeout: float = 60) -> Finished:
    _first_run(workspace)
    result = run_paicli(["-C", str(workspace), *args], env, timeout=timeout, memory_limit=MEMORY_LIMIT)
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr, result.stderr
    return result


def start_limited(workspace: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    _first_run(workspace)
    return subprocess.Popen(
        command(workspace, *args),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        preexec_fn=limited,
    )


def terminated(proc: subprocess.Popen[str]) -> Finished:
    """Sends SIGTERM and waits for the process to be gone."""
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=GONE_WITHIN)
    finally:
        proc.kill()
    assert proc.returncode in (130, -signal.SIGTERM), err
    assert "Traceback" not in err, err
    return Finished(proc.returncode, out, err)


def one_line_error(done: Finished, code: int, fragment: str) -> None:
    assert done.code == code, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("paicli: ") and "warning" not in line]
    assert len(lines) == 1 and fragment in lines[0], done.stderr


def finished_failed(done: Finished, fragment: str) -> None:
    assert done.code == 1, done.stderr
    finished = done.of("plan_finished")
    assert len(finished) == 1 and finished[0]["status"] == "FAILED", done.stdout
    assert fragment in (finished[0]["summary"] or ""), finished[0]


@pytest.fixture
def outside(tmp_path: Path, workspace: Path, home: Path) -> Iterator[Path]:
    """A folder outside the workspace; after the test, everything outside the workspace and HOME must be
    as it was when paicli first ran (`run_limited` and `start_limited` take the snapshot)."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "canary.txt").write_text("untouched")
    (folder / "elsewhere").mkdir()  # an empty folder a symlink may point to
    _SNAPSHOTS.clear()
    yield folder
    assert _SNAPSHOTS, "paicli never ran"
    assert snapshot(tmp_path, workspace, home) == _SNAPSHOTS[0], "something was written outside the workspace"


_SNAPSHOTS: list[dict[str, bytes | str]] = []


def _first_run(workspace: Path) -> None:
    """Remembers what lies outside the workspace before paicli runs for the first time in a test."""
    if not _SNAPSHOTS:
        tmp_path = workspace.parent
        _SNAPSHOTS.append(snapshot(tmp_path, workspace, tmp_path / "home"))


def snapshot(tmp_path: Path, workspace: Path, home: Path) -> dict[str, bytes | str]:
    found: dict[str, bytes | str] = {}
    for path in sorted(tmp_path.rglob("*")):
        if path.is_relative_to(workspace) or path.is_relative_to(home) or ".pytest" in path.parts:
            continue
        if path.is_symlink():
            found[str(path)] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[str(path)] = path.read_bytes()[:200]
        else:
            found[str(path)] = "dir" if path.is_dir() else "special"
    return found


def saved_plan(workspace: Path, plan_id: str, record: dict[str, object]) -> Path:
    folder = workspace / ".paicli" / "plans"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{plan_id}.json"
    path.write_text(json.dumps(record))
    return path


def record(tasks: list[dict[str, object]], *, plan_id: str = "x", round: int = 1, **plan: object) -> dict[str, object]:
    return {
        "id": plan_id,
        "created_at": 1.0,
        "updated_at": 4_000_000_000.0,
        "plan": {"goal": "resume me", "summary": "", "tasks": tasks, "status": "FAILED", "round": round, **plan},
    }


def task(task_id: str, status: str = "PENDING", *deps: str, round: int = 1) -> dict[str, object]:
    result = f"result of {task_id}" if status == "COMPLETED" else None
    return {
        "id": task_id,
        "description": f"do {task_id}",
        "dependencies": list(deps),
        "status": status,
        "result": result,
        "round": round,
    }


# ---- 1. a saved plan's id never leaves the plans folder ------------------------------------------


@pytest.mark.parametrize("kind", ["relative", "absolute"])
def test_a_hostile_id_inside_a_saved_plan_writes_nowhere_else(
    fake: FakeLLM, workspace: Path, home: Path, outside: Path, kind: str
) -> None:
    hostile = "../../outside/x" if kind == "relative" else str(outside / "x")
    saved_plan(workspace, "innocent", record([task("a", "COMPLETED"), task("b", "PENDING", "a")], plan_id=hostile))
    fake.on(task_is("b"), Reply.text("b done"))
    script_summary(fake)
    done = run_limited(workspace, paicli_env(fake, home), "plan", "--resume", "innocent", "--yes", "--json")
    assert done.code == 0, done.stderr
    assert done.of("plan_finished")[0]["status"] == "COMPLETED"
    assert sorted(p.name for p in (workspace / ".paicli" / "plans").iterdir()) == [
        ".gitignore",  # written whenever a plan is saved, even into a folder that was there (issue 29)
        "innocent.json",
        "innocent.md",
    ]
    assert json.loads((workspace / ".paicli" / "plans" / "innocent.json").read_text())["id"] == "innocent"


@pytest.mark.parametrize("plan_id", ["../outside/x", "/etc/passwd", ".hidden", "a/b"])
def test_ids_given_on_the_command_line_are_checked(
    fake: FakeLLM, workspace: Path, home: Path, outside: Path, plan_id: str
) -> None:
    done = run_limited(workspace, paicli_env(fake, home), "plan", "--resume", plan_id, "--yes", "--json")
    one_line_error(done, 2, "a plan id is a name of letters")
    assert fake.requests == []


# ---- 2. the folder is confined, reads are bounded ---------------------------------------------------


@pytest.mark.parametrize("link", [".paicli", ".paicli/plans"])
def test_a_symlinked_plans_folder_is_refused_for_reading_and_saving(
    fake: FakeLLM, workspace: Path, home: Path, outside: Path, link: str
) -> None:
    target = outside / "elsewhere"
    (workspace / link).parent.mkdir(parents=True, exist_ok=True)
    (workspace / link).symlink_to(target, target_is_directory=True)
    env = paicli_env(fake, home)
    one_line_error(run_limited(workspace, env, "plan", "--resume", "x", "--yes", "--json"), 2, "is a symlink")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})), repeat=True)
    done = run_limited(workspace, env, "plan", "goal", "--yes", "--json")
    finished_failed(done, "cannot save the plan")
    assert "is a symlink" in done.of("plan_finished")[0]["summary"]
    assert list(target.iterdir()) == []


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "sparse", "symlink-to-file"])
def test_special_and_huge_plan_files_are_refused_at_once(
    fake: FakeLLM, workspace: Path, home: Path, outside: Path, kind: str
) -> None:
    folder = workspace / ".paicli" / "plans"
    folder.mkdir(parents=True)
    path = folder / "bad.json"
    expected = {
        "dev-zero": "is a symlink",
        "fifo": "is a FIFO",
        "sparse": "is 1.0 GB, over the 8.0 MB limit",
        "symlink-to-file": "is a symlink",
    }[kind]
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "sparse":
        with path.open("wb") as sparse:
            sparse.truncate(1 << 30)
    else:
        (outside / "plan.json").write_text(json.dumps(record([task("a")])))
        path.symlink_to(outside / "plan.json")
    done = run_limited(workspace, paicli_env(fake, home), "plan", "--resume", "bad", "--yes", "--json", timeout=30)
    one_line_error(done, 2, expected)


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "sparse", "link-to-dev-zero"])
def test_from_refuses_devices_fifos_and_huge_files_at_once(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path, kind: str
) -> None:
    path = Path("/dev/zero") if kind == "dev-zero" else tmp_path / "from.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "sparse":
        with path.open("wb") as sparse:
            sparse.truncate(1 << 30)
    elif kind == "link-to-dev-zero":
        path.symlink_to("/dev/zero")
    expected = {
        "dev-zero": "character device",
        "fifo": "is a FIFO",
        "sparse": "is 1.0 GB",
        "link-to-dev-zero": "character device",
    }[kind]
    done = run_limited(workspace, paicli_env(fake, home), "plan", "--from", str(path), "--yes", "--json", timeout=30)
    one_line_error(done, 2, expected)


# ---- 3. deep nesting --------------------------------------------------------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_deep_nesting_in_a_planner_reply_fails_the_plan_with_one_line(
    fake: FakeLLM, workspace: Path, home: Path, outside: Path
) -> None:
    reply = '{"summary": "s", "tasks": [{"id": "a", "description": "d", "x": ' + nested(1000) + "}]}"
    fake.on(system_is(PLANNER), Reply.text(reply), repeat=True)
    done = run_limited(workspace, paicli_env(fake, home), "plan", "goal", "--yes", "--json")
    finished_failed(done, "nested too deeply")
    assert len(fake.requests) == 3  # asked twice more, then given up


def test_deep_nesting_in_a_reviewer_reply_fails_the_plan_with_one_line(
    fake: FakeLLM, workspace: Path, home: Path, outside: Path
) -> None:
    (home / ".paicli" / "config.toml").write_text("retry_backoff = 0.01\n")  # the reviewer on
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})))
    fake.on(task_is("a"), Reply.text("a done"))
    fake.on(system_is(REVIEWER), Reply.text('{"score": 9, "reflection": ' + nested(2000) + "}"), repeat=True)
    done = run_limited(workspace, paicli_env(fake, home), "plan", "goal", "--yes", "--json")
    finished_failed(done, "nested too deeply")


@pytest.mark.parametrize(
    "text",
    [
        '{"goal": "g", "tasks": [{"id": "a", "description": "d", "x": ' + nested(100_000) + "}]}",
        '{"goal": ' + nested(50_000) + ', "tasks": [{"id": "a", "description": "d"}]}',
        "{'tasks': [{'id': 'a', 'description': 'd', 'x': " + "{'k': " * 5000 + "1" + "}" * 5000 + "}]}",
    ],
    ids=["arrays", "goal", "single-quoted-objects"],
)
def test_deep_nesting_in_a_from_file_is_one_line(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path, text: str
) -> None:
    (tmp_path / "deep.json").write_text(text)
    done = run_limited(workspace, paicli_env(fake, home), "plan", "--from", str(tmp_path / "deep.json"), "--yes")
    one_line_error(done, 2, "nested too deeply")


def test_deep_nesting_in_a_saved_plan_is_one_line(fake: FakeLLM, workspace: Path, home: Path) -> None:
    path = saved_plan(workspace, "deep", record([task("a")]))
    path.write_text(path.read_text().replace('"resume me"', nested(100_000)))
    done = run_limited(workspace, paicli_env(fake, home), "plan", "--resume", "deep", "--yes")
    one_line_error(done, 2, "nested too deeply")


# ---- 4. pathological replies: bounded, and SIGTERM is never held up ----------------------------------

MANY_CANDIDATES = "".join(f'[{{"id":{n}}}]' for n in range(40_000))  # 40,000 tiny plans in 530 KB
HUGE_SINGLE_QUOTED = "{'summary': 's', 'tasks': [{'id': 'a', 'description': '" + "x" * 900_000 + "'}]}"


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [(MANY_CANDIDATES, "2 different JSON plans"), (HUGE_SINGLE_QUOTED, "too long to be repaired")],
    ids=["many-candidates", "huge-single-quoted"],
)
def test_pathological_replies_are_rejected_and_reasks_quote_only_an_excerpt(
    fake: FakeLLM, workspace: Path, home: Path, reply: str, fragment: str
) -> None:
    fake.on(system_is(PLANNER), Reply.text(reply, chunk=100_000), repeat=True)
    done = run_limited(workspace, paicli_env(fake, home), "plan", "goal", "--yes", "--json")
    finished_failed(done, fragment)
    assert len(fake.requests) == 3
    assert all(len(json.dumps(r.body)) < 100_000 for r in fake.requests)  # never the whole reply sent back


@pytest.mark.parametrize("reply", [MANY_CANDIDATES, HUGE_SINGLE_QUOTED], ids=["many-candidates", "huge-single-quoted"])
def test_sigterm_while_pathological_replies_are_parsed_exits_promptly(
    fake: FakeLLM, workspace: Path, home: Path, reply: str
) -> None:
    fake.on(system_is(PLANNER), Reply.text(reply, chunk=100_000), repeat=True)
    proc = start_limited(workspace, paicli_env(fake, home), "plan", "goal", "--yes", "--json")
    try:
        fake.wait_for_requests(2, timeout=30)  # the first reply has been parsed and rejected
    finally:
        done = terminated(proc)
    finished = done.of("plan_finished")
    assert finished and finished[-1]["status"] == "CANCELLED"


# ---- 5. two planners at once never share a record ----------------------------------------------------


def test_concurrent_planners_in_one_workspace_keep_every_record(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []}), latency=0.2), repeat=True)
    fake.on(task_is("a"), Reply.text("a done"), repeat=True)
    script_summary(fake)
    goals = ["fix the bug", "fix the bug!", "fix the bug?", "fix: the bug"]  # one slug for all
    barrier = threading.Barrier(len(goals))
    results: list[Finished] = []

    def planner(goal: str) -> None:
        barrier.wait()
        results.append(run_limited(workspace, paicli_env(fake, home), "plan", goal, "--yes", "--json"))

    threads = [threading.Thread(target=planner, args=(goal,)) for goal in goals]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert [r.code for r in results] == [0] * len(goals), [r.stderr for r in results]
    saved = sorted((workspace / ".paicli" / "plans").glob("*.json"))
    assert len(saved) == len(goals)  # 0 lost records
    assert sorted(json.loads(p.read_text())["plan"]["goal"] for p in saved) == sorted(goals)


# ---- 6. resumed plans are validated -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("tasks", "fragment"),
    [
        ([task("a", "COMPLETED"), task("b", "PENDING", "zz")], 'task "b" depends on "zz", which is not a task'),
        ([], "it has no tasks"),
        ([task("a", "PENDING", "b"), task("b", "PENDING", "a")], "form a cycle"),
        ([task("a"), task("a")], 'task id "a" is used by 2 tasks'),
    ],
    ids=["missing-dependency", "empty", "cycle", "duplicate"],
)
def test_a_saved_plan_that_is_not_valid_is_refused_in_one_line(
    fake: FakeLLM, workspace: Path, home: Path, tasks: list[dict[str, object]], fragment: str
) -> None:
    saved_plan(workspace, "bad", record(tasks))
    done = run_limited(workspace, paicli_env(fake, home), "plan", "--resume", "bad", "--yes", "--json")
    one_line_error(done, 2, fragment)
    assert fake.requests == []


def test_a_task_left_running_in_an_earlier_round_does_not_end_the_plan_completed(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    saved_plan(
        workspace, "stuck", record([task("old"), task("new", "PENDING", "old", round=2)], round=2, status="RUNNING")
    )
    saved = workspace / ".paicli" / "plans" / "stuck.json"
    data = json.loads(saved.read_text())
    data["plan"]["tasks"][0]["status"] = "RUNNING"
    saved.write_text(json.dumps(data))
    fake.on(lambda body: True, Reply.text("{}"), repeat=True)  # a replan gets nothing usable
    env = paicli_env(fake, home, PAICLI_PLAN_MAX_REPLANS="0")
    done = run_limited(workspace, env, "plan", "--resume", "stuck", "--yes", "--json")
    assert done.code == 1 and done.of("plan_finished")[0]["status"] == "FAILED", done.stdout
    assert {e["task_id"]: e["status"] for e in done.of("task_finished")} == {"new": "SKIPPED"}


# ---- 7. cost settings and trust (issue 21 item 7; issue 19 class 8) ---------------------------------


def test_an_untrusted_repository_cannot_raise_review_rounds(fake: FakeLLM, workspace: Path, home: Path) -> None:
    (home / ".paicli" / "config.toml").write_text("retry_backoff = 0.01\n")  # the reviewer on, max_rounds 3
    (workspace / ".paicli").mkdir()
    (workspace / ".paicli" / "config.toml").write_text("max_rounds = 20\nreview_threshold = 10\n")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})), repeat=True)
    fake.on(system_is("# Mode: replanning"), Reply.text(plan_json({"more": []})), repeat=True)
    fake.on(lambda body: "id: " in json.dumps(body), Reply.text("done"), repeat=True)
    fake.on(system_is(REVIEWER), Reply.text('{"score": 9, "reflection": "fine"}'), repeat=True)
    script_summary(fake)
    done = run_limited(workspace, paicli_env(fake, home), "plan", "goal", "--yes", "--json")
    assert done.code == 0, done.stderr
    assert [e["score"] for e in done.of("review")] == [9]  # 9 passes the user's threshold of 8, not 10
    assert "max_rounds = 20 (yours: 3)" in done.stderr and "review_threshold = 10 (yours: 8.0)" in done.stderr


@pytest.mark.parametrize("link", ["config", "folder"])
def test_yolo_in_a_config_symlinked_to_a_trusted_repository_is_not_applied(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path, link: str
) -> None:
    trusted = tmp_path / "trusted-repo"
    (trusted / ".paicli").mkdir(parents=True)
    (trusted / ".paicli" / "config.toml").write_text('approval = "yolo"\n')
    from paicli.trust import TrustStore

    assert TrustStore(home).trust_current(trusted, ".paicli/config.toml")
    if link == "config":
        (workspace / ".paicli").mkdir()
        (workspace / ".paicli" / "config.toml").symlink_to(trusted / ".paicli" / "config.toml")
    else:
        (workspace / ".paicli").symlink_to(trusted / ".paicli", target_is_directory=True)
    for folder in (workspace, trusted):
        (folder / "keep.txt").write_text("kept\n")
    fake.on(has_tool_result("execute_command"), Reply.text("finished"), repeat=True)
    fake.on("hello", Reply.tool_calls([("execute_command", {"command": "rm keep.txt"})]), repeat=True)
    env = paicli_env(fake, home)

    done = run_limited(workspace, env, "run", "hello", "--json")
    assert done.code == 0, done.stderr
    assert (workspace / "keep.txt").exists()  # yolo did not apply: `rm` needs an approval headless
    assert "is a symlink" in done.stderr and "ignored" in done.stderr

    control = run_limited(trusted, env, "run", "hello", "--json")  # the trusted repository itself: yolo applies
    assert control.code == 0 and not (trusted / "keep.txt").exists(), control.stderr
