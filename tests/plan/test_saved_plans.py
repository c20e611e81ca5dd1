from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from paicli.common.errors import ConfigError
from paicli.plan import recorder as recorder_module
from paicli.plan.model import Plan, PlanStatus, Task, TaskStatus
from paicli.plan.recorder import PlanRecorder
from paicli.plan.saved_plans import PlanStore, plan_from_file, prepare_resume


def sample_plan() -> Plan:
    plan = Plan(
        goal="Add a CLI flag",
        summary="two steps",
        tasks=[Task(id="a", description="read"), Task(id="b", description="write", dependencies=["a"])],
    )
    plan.task("a").status, plan.task("a").result = TaskStatus.COMPLETED, "read 3 files"
    plan.task("b").status, plan.task("b").error = TaskStatus.FAILED, "model exploded"
    plan.status = PlanStatus.FAILED
    return plan


def test_a_plan_is_saved_as_json_and_markdown_and_loads_back(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    recorder = PlanRecorder(store, failure=lambda: "b failed")
    recorder(sample_plan())  # no event loop: written at once
    (saved,) = store.list()
    assert saved.id.endswith("add-a-cli-flag") and saved.failure == "b failed"
    assert store.load(saved.id).plan == sample_plan()
    markdown = (tmp_path / ".paicli" / "plans" / f"{saved.id}.md").read_text()
    assert "✓ a [ANALYSIS] COMPLETED" in markdown and "> read 3 files" in markdown
    assert "Error: model exploded" in markdown


def test_the_plans_folder_paicli_creates_stays_out_of_git_status(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, env=env, check=True)
    (tmp_path / ".paicli").mkdir()
    (tmp_path / ".paicli" / "config.toml").write_text("review = false\n")
    PlanRecorder(PlanStore(tmp_path))(sample_plan())
    assert (tmp_path / ".paicli" / "plans" / ".gitignore").read_text().endswith("*\n")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert status == "?? .paicli/config.toml\n"  # the config stays committable; the plans do not show


def test_a_plans_folder_that_was_there_before_gets_a_gitignore_too(tmp_path: Path) -> None:
    (tmp_path / ".paicli" / "plans").mkdir(parents=True)  # a repository may ship one (issue 29)
    PlanRecorder(PlanStore(tmp_path))(sample_plan())
    assert (tmp_path / ".paicli" / "plans" / ".gitignore").read_text().endswith("*\n")


def test_unknown_or_unsafe_ids_are_a_clear_error(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    for plan_id in ("nope", "../../etc/passwd"):
        with pytest.raises(ConfigError, match="no saved plan"):
            store.load(plan_id)


def test_ids_are_unique_for_the_same_goal(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    first, second = PlanRecorder(store), PlanRecorder(store)
    first(sample_plan())
    second(sample_plan())
    assert first.plan_id != second.plan_id and len(store.list()) == 2


def test_resume_keeps_completed_results_and_resets_the_rest() -> None:
    plan = prepare_resume(sample_plan())
    assert plan.task("a").status is TaskStatus.COMPLETED and plan.task("a").result == "read 3 files"
    assert plan.task("b").status is TaskStatus.PENDING and plan.task("b").error is None
    assert plan.status is PlanStatus.CREATED
    done = sample_plan()
    done.status = PlanStatus.COMPLETED
    with pytest.raises(ConfigError, match="already COMPLETED"):
        prepare_resume(done)


def test_latest_resumable_skips_completed_plans(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    failed = PlanRecorder(store)
    failed(sample_plan())
    completed_plan = sample_plan()
    completed_plan.status = PlanStatus.COMPLETED
    PlanRecorder(store)(completed_plan)
    latest = store.latest_resumable()
    assert latest is not None and latest.id == failed.plan_id


async def test_inside_a_loop_changes_are_saved_together_off_the_loop_and_flush_waits(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    recorder = PlanRecorder(store)
    plan = sample_plan()
    for status in (PlanStatus.RUNNING, PlanStatus.FAILED, PlanStatus.CANCELLED):
        plan.status = status
        recorder(plan)
    assert store.list() == []  # nothing written yet: the three changes of this turn are one save
    await recorder.flush()
    (saved,) = store.list()
    assert saved.plan.status is PlanStatus.CANCELLED
    plan.status = PlanStatus.RUNNING
    recorder(plan)
    await asyncio.sleep(0.2)  # saved soon after, without a flush
    assert store.load(saved.id).plan.status is PlanStatus.RUNNING


async def test_a_flush_saves_at_once_even_while_the_writer_waits_to_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer waits RENDER_DELAY before rendering (the tasks just started send their requests first);
    the plan's end (flush) never waits for that pause."""
    monkeypatch.setattr(recorder_module, "RENDER_DELAY", 3600.0)
    store = PlanStore(tmp_path)
    recorder = PlanRecorder(store)
    plan = sample_plan()
    recorder(plan)
    await asyncio.sleep(0.05)  # the writer is now inside its pause
    assert store.list() == []
    plan.status = PlanStatus.CANCELLED
    recorder(plan)
    await asyncio.wait_for(recorder.flush(), timeout=30)
    (saved,) = store.list()
    assert saved.plan.status is PlanStatus.CANCELLED
    plan.status = PlanStatus.RUNNING  # after a flush, changes pause again before they are saved
    recorder(plan)
    await asyncio.sleep(0.05)
    assert store.load(saved.id).plan.status is PlanStatus.CANCELLED
    await asyncio.wait_for(recorder.flush(), timeout=30)
    assert store.load(saved.id).plan.status is PlanStatus.RUNNING


def test_a_hand_written_plan_file_is_validated(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"goal": "ship", "tasks": [{"id": "x", "description": "do", "dependencies": []}]}))
    plan = plan_from_file(good)
    assert plan.goal == "ship" and plan.ids() == ["x"]
    cyclic = tmp_path / "cyclic.json"
    cyclic.write_text(
        json.dumps(
            {
                "tasks": [
                    {"id": "x", "description": "do", "dependencies": ["y"]},
                    {"id": "y", "description": "do", "dependencies": ["x"]},
                ]
            }
        )
    )
    with pytest.raises(ConfigError, match=r"cyclic\.json: .*(x → y → x|y → x → y)"):
        plan_from_file(cyclic)
    with pytest.raises(ConfigError, match="cannot read"):
        plan_from_file(tmp_path / "missing.json")


# ---- untrusted folder contents (issue 21) -----------------------------------------------------------


def saved_record(store: PlanStore, plan: Plan | None = None) -> str:
    store.workspace.mkdir(parents=True, exist_ok=True)
    recorder = PlanRecorder(store)
    recorder(plan or sample_plan())
    assert recorder.plan_id is not None
    return recorder.plan_id


def outside_files(tmp_path: Path) -> set[Path]:
    """Every file under tmp_path's parent that is not under tmp_path (where a test may write)."""
    return {p for p in tmp_path.parent.rglob("*") if not p.is_relative_to(tmp_path)}


@pytest.mark.parametrize("inner_id", ["../../../../../../tmp/x", "/tmp/x", "elsewhere", "", "a/b"])
def test_the_id_is_the_file_name_never_the_field_inside(tmp_path: Path, inner_id: str) -> None:
    workspace = tmp_path / "ws"
    store = PlanStore(workspace)
    plan_id = saved_record(store)
    path = store.folder / f"{plan_id}.json"
    data = json.loads(path.read_text())
    data["id"] = inner_id
    (store.folder / "innocent.json").write_text(json.dumps(data))
    record = store.load("innocent")
    assert record.id == "innocent"
    assert {r.id for r in store.list()} == {"innocent", plan_id}
    before = outside_files(workspace)
    PlanRecorder(store, plan_id=record.id)(prepare_resume(record.plan))
    assert outside_files(workspace) == before
    assert sorted(p.name for p in store.folder.iterdir()) == sorted(
        [".gitignore", f"{plan_id}.json", f"{plan_id}.md", "innocent.json", "innocent.md"]
    )


@pytest.mark.parametrize(
    "plan_id",
    ["/tmp/x", "../x", "../../../../tmp/x", "a/b", ".hidden", "..", ".", "", "x" * 101, "a\x00b", "a b", "ü"],
)
def test_ids_that_are_not_plain_names_are_refused_on_every_read_and_write(tmp_path: Path, plan_id: str) -> None:
    store = PlanStore(tmp_path)
    with pytest.raises(ConfigError, match=r"no saved plan .*a plan id is a name of letters"):
        store.load(plan_id)
    with pytest.raises(ConfigError, match="a plan id is"):
        store.write(plan_id, "{}", "")
    with pytest.raises(ConfigError, match="a plan id is"):
        PlanRecorder(store, plan_id=plan_id)
    assert not (tmp_path / ".paicli").exists()


@pytest.mark.parametrize("link", [".paicli", ".paicli/plans"])
def test_a_symlinked_plans_folder_is_never_read_or_written(tmp_path: Path, link: str) -> None:
    workspace, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    saved_record(PlanStore(elsewhere))  # a real plan there, to be found if the link were followed
    target = elsewhere / link
    (workspace / link).parent.mkdir(parents=True, exist_ok=True)
    (workspace / link).symlink_to(target, target_is_directory=True)
    (plan_id,) = PlanStore(elsewhere).ids()
    store = PlanStore(workspace)
    with pytest.raises(ConfigError, match=r"is a symlink .*paicli does not follow symlinks"):
        store.load(plan_id)
    assert store.list() == [] and store.latest_resumable() is None
    files_before = sorted(p.name for p in (elsewhere / ".paicli" / "plans").iterdir())
    recorder = PlanRecorder(store)
    with pytest.raises(ConfigError, match=r"cannot save the plan: .*is a symlink"):
        recorder(sample_plan())
    recorder(sample_plan())  # said once; later changes are not saved and raise nothing
    assert sorted(p.name for p in (elsewhere / ".paicli" / "plans").iterdir()) == files_before


def test_a_symlinked_plan_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "ws")
    real_id = saved_record(store)
    secret = tmp_path / "secret.json"
    secret.write_text((store.folder / f"{real_id}.json").read_text())
    (store.folder / "linked.json").symlink_to(secret)
    with pytest.raises(ConfigError, match=r"linked\.json is a symlink"):
        store.load("linked")
    assert [r.id for r in store.list()] == [real_id]
    (store.folder / "zero.json").symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match=r"zero\.json is a symlink"):
        store.load("zero")


def test_a_symlinked_markdown_file_is_replaced_never_written_through(tmp_path: Path) -> None:
    store = PlanStore(tmp_path / "ws")
    plan_id = saved_record(store)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    markdown = store.folder / f"{plan_id}.md"
    markdown.unlink()
    markdown.symlink_to(victim)
    PlanRecorder(store, plan_id=plan_id)(sample_plan())
    assert victim.read_text() == "precious"
    assert not markdown.is_symlink() and markdown.read_text().startswith(f"# Plan {plan_id}")


def test_fifos_devices_and_huge_files_are_refused_without_reading(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    store.check_folder()
    os.mkfifo(store.folder / "fifo.json")
    with pytest.raises(ConfigError, match=r"fifo\.json is a FIFO, not a regular file"):
        store.load("fifo")  # never blocks: the entry is looked at before it is opened
    with open(store.folder / "sparse.json", "wb") as sparse:
        sparse.truncate(1 << 30)  # a gigabyte that takes no disk
    with pytest.raises(ConfigError, match=r"sparse\.json is 1\.0 GB, over the 8\.0 MB limit"):
        store.load("sparse")
    assert store.list() == []
    with pytest.raises(ConfigError, match=r"is a character device"):
        plan_from_file(Path("/dev/zero"))
    os.mkfifo(tmp_path / "from.fifo")
    with pytest.raises(ConfigError, match=r"from\.fifo is a FIFO"):
        plan_from_file(tmp_path / "from.fifo")
    with pytest.raises(ConfigError, match=r"sparse\.json is 1\.0 GB"):
        plan_from_file(store.folder / "sparse.json")
    (tmp_path / "link-to-zero.json").symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match=r"is a character device"):
        plan_from_file(tmp_path / "link-to-zero.json")


@pytest.mark.parametrize("where", ["result", "goal"])
def test_a_deeply_nested_saved_plan_is_a_clear_error(tmp_path: Path, where: str) -> None:
    store = PlanStore(tmp_path)
    plan_id = saved_record(store)
    path = store.folder / f"{plan_id}.json"
    deep = "[" * 100_000 + "]" * 100_000
    text = path.read_text()
    text = text.replace('"read 3 files"', deep) if where == "result" else text.replace('"Add a CLI flag"', deep)
    path.write_text(text)
    with pytest.raises(ConfigError, match="nested too deeply"):
        store.load(plan_id)


def test_a_deeply_nested_from_file_is_a_clear_error(tmp_path: Path) -> None:
    for name, text in {
        "array.json": '{"goal": ' + "[" * 50_000 + "]" * 50_000 + ', "tasks": [{"id": "a", "description": "d"}]}',
        "object.json": '{"tasks": [{"id": "a", "description": "d", "x": ' + '{"a": ' * 5000 + "1" + "}" * 5001 + "]}",
    }.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(ConfigError, match=rf"{name}: the JSON is nested too deeply"):
            plan_from_file(tmp_path / name)


def test_the_newest_plan_is_chosen_by_the_files_time_not_a_field(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    honest = saved_record(store)
    liar_plan = sample_plan()
    liar_plan.goal = "lies about its time"
    liar = saved_record(store, liar_plan)
    path = store.folder / f"{liar}.json"
    data = json.loads(path.read_text())
    data["updated_at"] = data["created_at"] = 4_000_000_000.0  # the year 2096
    path.write_text(json.dumps(data))
    os.utime(path, (1_000_000, 1_000_000))  # but the file itself is old
    assert store.ids() == [honest, liar]
    latest = store.latest_resumable()
    assert latest is not None and latest.id == honest


def test_list_reads_only_the_newest_few(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    for n in range(5):
        path_id = saved_record(store)
        os.utime(store.folder / f"{path_id}.json", (1_000_000 + n, 1_000_000 + n))
    assert len(store.list(limit=3)) == 3 and len(store.ids()) == 5


def test_list_stops_once_the_files_read_add_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = PlanStore(tmp_path)
    for _ in range(4):
        saved_record(store)
    size = max((store.folder / f"{plan_id}.json").stat().st_size for plan_id in store.ids())  # ids differ in length
    monkeypatch.setattr("paicli.plan.saved_plans.LIST_BYTES", size * 2 + 1)
    assert len(store.list()) == 2
    monkeypatch.setattr("paicli.plan.saved_plans.LIST_BYTES", 1)
    assert len(store.list()) == 1  # the newest is always read


def _reserve_after_barrier(folder: str, barrier: Any, goal: str, out: Any) -> None:
    barrier.wait()
    recorder = PlanRecorder(PlanStore(Path(folder)))
    plan = sample_plan()
    plan.goal = goal
    recorder(plan)
    out.put(recorder.plan_id)


def test_concurrent_planners_never_share_an_id(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = 8
    barrier, out = context.Barrier(workers), context.Queue()
    goals = [f"Fix the bug{'!' * (n % 3)}{'?' * (n // 3)}" for n in range(workers)]  # one slug for all
    processes = [
        context.Process(target=_reserve_after_barrier, args=(str(tmp_path), barrier, goal, out)) for goal in goals
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    ids = [out.get(timeout=10) for _ in processes]
    assert len(set(ids)) == workers
    store = PlanStore(tmp_path)
    assert sorted(store.ids()) == sorted(ids)  # 0 lost records
    assert sorted(record.plan.goal for record in store.list(limit=workers)) == sorted(goals)
