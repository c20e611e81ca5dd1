"""Checkpoints under faults: git missing, a damaged or deleted shadow repository, a full disk, a second
paicli holding the lock, and SIGKILL in the middle of an undo. Each runs the real paicli in a subprocess."""

from __future__ import annotations

import fcntl
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from paicli.app.checkpoints.journal import Entry
from paicli.app.checkpoints.store import CheckpointStore, store_folder
from tests.app.checkpoints.conftest import GIT, recording, tool_write
from tests.conftest import Finished, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, has_tool_result


def script_write(fake: FakeLLM, path: str = "a.txt", content: str = "written\n") -> None:
    fake.on(has_tool_result("write_file"), Reply.text("Wrote it."), repeat=True)
    fake.on("write", Reply.tool_calls([("write_file", {"path": path, "content": content})]), repeat=True)


def run_write(workspace: Path, env: dict[str, str]) -> Finished:
    return run_paicli(["-C", str(workspace), "run", "write", "--json"], env)


def test_without_git_checkpoints_are_off_with_one_notice_and_the_turn_works(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    bin_without_git = tmp_path / "bin"
    bin_without_git.mkdir()
    for folder in ("/usr/local/bin", "/usr/bin", "/bin"):
        for name in os.listdir(folder) if os.path.isdir(folder) else []:
            if name != "git" and not (bin_without_git / name).exists():
                (bin_without_git / name).symlink_to(Path(folder) / name)
    env = paicli_env(fake, home, PATH=str(bin_without_git))
    script_write(fake)
    done = run_write(workspace, env)
    assert done.code == 0, done.stderr
    notices = [e["message"] for e in done.of("notice") if "checkpoint" in e["message"]]
    assert notices == ["checkpoints are off: git is not installed (undo needs it)"]
    assert (workspace / "a.txt").read_text() == "written\n"
    assert "changes" not in done.of("run_finished")[0]
    undo = run_paicli(["-C", str(workspace), "undo"], env)
    assert undo.code == 2 and undo.stderr.strip() == "paicli: paicli undo needs git, and git is not installed"


def store_of(workspace: Path, home: Path) -> Path:
    return store_folder(home, workspace)


def test_a_deleted_or_damaged_shadow_repository_is_started_afresh_without_a_crash(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    env = paicli_env(fake, home)
    script_write(fake)
    assert run_write(workspace, env).code == 0
    folder = store_of(workspace, home)
    shutil.rmtree(folder / "git")  # deleted
    (workspace / "a.txt").unlink()
    done = run_write(workspace, env)
    assert done.code == 0, done.stderr
    notices = " ".join(e["message"] for e in done.of("notice"))
    assert "unusable (its repository is missing); started a fresh one" in notices
    assert [c["path"] for c in done.of("run_finished")[0]["changes"]] == ["a.txt"]

    (folder / "git" / "paicli-index").write_bytes(b"garbage, not an index")  # damaged
    (workspace / "a.txt").unlink()
    done = run_write(workspace, env)
    assert done.code == 0, done.stderr
    assert "started a fresh one" in " ".join(e["message"] for e in done.of("notice"))
    assert [c["path"] for c in done.of("run_finished")[0]["changes"]] == ["a.txt"]
    undo = run_paicli(["-C", str(workspace), "undo"], env)
    assert undo.code == 0, undo.stderr
    assert not (workspace / "a.txt").exists()

    for obj in (folder / "git" / "objects").rglob("*"):  # every stored content damaged
        if obj.is_file():
            obj.chmod(0o644)
            obj.write_bytes(b"not zlib")
    redo = run_paicli(["-C", str(workspace), "undo", "--redo"], env)
    assert redo.code == 1
    assert redo.stderr.startswith("paicli: undo failed:") and len(redo.stderr.strip().splitlines()) == 1
    assert not (workspace / "a.txt").exists()  # nothing half done


def limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, 256 * 1024))


def test_a_full_disk_while_checkpointing_lets_the_turn_go_on_with_a_notice(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / "noise.bin").write_bytes(os.urandom(1024 * 1024))  # git cannot store it: over the limit
    script_write(fake)
    done = subprocess.run(
        [sys.executable, "-m", "paicli", "-C", str(workspace), "run", "write", "--json"],
        env=paicli_env(fake, home),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        preexec_fn=limit_file_size,
    )
    finished = Finished(done.returncode, done.stdout, done.stderr)
    assert finished.code == 0, finished.stderr
    notices = [e["message"] for e in finished.of("notice") if "checkpoint" in e["message"]]
    assert len(notices) == 1 and "going on without checkpoints" in notices[0] and "too large" in notices[0]
    assert (workspace / "a.txt").read_text() == "written\n"
    assert finished.of("run_finished")[0]["content"] == "Wrote it."


def test_a_second_paicli_waits_for_the_lock_and_says_so(fake: FakeLLM, workspace: Path, home: Path) -> None:
    folder = store_of(workspace, home)
    folder.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(folder.with_name(folder.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        waiting = subprocess.Popen(
            [sys.executable, "-m", "paicli", "-C", str(workspace), "undo", "--list"],
            env=paicli_env(fake, home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert waiting.stderr is not None
        line = waiting.stderr.readline()
        assert "another paicli is writing checkpoints of this workspace; waiting for it" in line
        assert waiting.poll() is None
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
    out, _ = waiting.communicate(timeout=60)
    assert waiting.returncode == 0 and "nothing to undo yet" in out


def test_a_turn_waits_for_another_paicli_holding_the_lock_and_says_so(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    script_write(fake)
    folder = store_of(workspace, home)
    folder.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(folder.with_name(folder.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        running = subprocess.Popen(
            [sys.executable, "-m", "paicli", "-C", str(workspace), "run", "write", "--json"],
            env=paicli_env(fake, home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert running.stdout is not None
        lines = [running.stdout.readline()]
        while '"notice"' in lines[-1] and "another paicli is writing checkpoints" not in lines[-1]:
            lines.append(running.stdout.readline())  # another notice first (the sandbox's, on a loaded machine)
        assert "another paicli is writing checkpoints of this workspace" in lines[-1], lines
        assert fake.requests == []  # the turn has not started: its checkpoint comes first
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
    out, err = running.communicate(timeout=60)
    assert running.returncode == 0, err
    assert '"run_finished"' in out and (workspace / "a.txt").exists()


FILES = 600


def test_sigkill_in_the_middle_of_an_undo_leaves_every_file_before_or_after(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    names = [f"f{n:04d}.txt" for n in range(FILES)]
    for name in names[::2]:
        (workspace / name).write_text(f"before {name}\n" * 50)
    store = CheckpointStore(GIT, workspace, store_folder(home, workspace), notify=lambda m: None)
    rec = recording(store, "plan", "big-plan")
    rec.begin_step("task_1")
    for name in names:
        tool_write(rec, "task_1", name, f"after {name}\n" * 60)
    rec.end_step("task_1")
    rec.finish()
    before = {name: f"before {name}\n" * 50 if n % 2 == 0 else None for n, name in enumerate(names)}
    after = {name: f"after {name}\n" * 60 for name in names}
    last = names[-2]  # the last file written back (removals go first)
    undo = subprocess.Popen(
        [sys.executable, "-m", "paicli", "-C", str(workspace), "undo"],
        env=paicli_env(fake, home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    # Freeze it once it has put some files back but not the last one, then kill it there.
    while undo.poll() is None:
        if (workspace / names[FILES // 3]).read_text() == before[names[FILES // 3]]:
            undo.send_signal(signal.SIGSTOP)
            break
    stopped_half_way = undo.poll() is None and (workspace / last).read_text() == after[last]
    undo.kill()
    undo.communicate()
    for name in names:
        path = workspace / name
        now = path.read_text() if path.exists() else None
        assert now in (before[name], after[name]), name
    assert all(p.startswith("f") or p.endswith(".paicli-undo") for p in os.listdir(workspace))
    if stopped_half_way:
        entry = Entry.model_validate_json((store.folder / "entries" / "big-plan.json").read_text())
        assert entry.undos[-1].state == "undoing"
    listed = run_paicli(["-C", str(workspace), "undo", "--list"], paicli_env(fake, home))
    assert listed.code == 0, listed.stderr
    if stopped_half_way:
        assert "finished an interrupted undo of big-plan" in listed.stderr
    assert {p.name: p.read_text() for p in workspace.iterdir()} == {k: v for k, v in before.items() if v}
    assert "undone" in listed.stdout.splitlines()[0]
