"""The index warmed in the background while the user types: the first plan's map then reads nothing the
warm-up read, waits for it rather than racing it, and lists through the session's watched listing. Not
started where the map is off or outside a repository's top folder."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

from pydantic import SecretStr

from paicli.common.events import ListSink, NullSink
from paicli.config import Settings
from paicli.repomap.warmup import MapWarmup
from paicli.runtime import Runtime, build_runtime
from paicli.tools.watched_listing import WatchedListings
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM
from tests.repomap.maprepo import make_repo


def runtime_for(fake: FakeLLM, workspace: Path, home: Path, **settings: object) -> Runtime:
    chosen = Settings(workspace=workspace, api_key=SecretStr(TEST_KEY), base_url=fake.base_url, **settings)
    runtime = build_runtime(chosen, NullSink(), announce=False)
    runtime.home = home
    runtime.watched = WatchedListings(clock=lambda: time.time_ns() + 3 * 10**9)  # as if settled for 3 s
    return runtime


def test_the_first_plan_finds_the_index_warmed(fake: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    runtime = runtime_for(fake, repo, tmp_path / "home")
    runtime.warm_map()
    assert runtime.map_warmup is not None
    runtime.map_warmup.wait()
    warmed = runtime.map_warmup.report
    assert warmed is not None and warmed.read == warmed.listed == 8
    planner_map = runtime.planner_map(ListSink())
    assert planner_map.ready == runtime.map_warmup.wait  # the plan waits for it
    text = planner_map("refund in payments.py")
    assert "src/shop/payments.py" in text
    assert planner_map.repo_map.index.update().read == 0  # nothing left to read
    assert runtime.watched.listed == 1  # one listing for both, the watch since
    runtime.warm_map()  # once per session
    assert runtime.map_warmup.report is warmed


def test_the_plan_waits_for_a_warm_up_still_running(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    release = threading.Event()
    order: list[str] = []

    class SlowListings(WatchedListings):
        def __call__(self, workspace: Path):  # type: ignore[no-untyped-def]
            if threading.current_thread().name == "paicli-index":
                release.wait(5)
                order.append("warm-up listed")
            return super().__call__(workspace)

    warmup = MapWarmup(repo, tmp_path / "home", SlowListings())
    assert warmup.start()
    waiting = threading.Thread(target=lambda: (warmup.wait(), order.append("plan went on")))
    waiting.start()
    time.sleep(0.2)
    assert order == []  # still waiting
    release.set()
    waiting.join(10)
    assert order == ["warm-up listed", "plan went on"] and warmup.report is not None


def test_no_warm_up_with_the_map_off_or_outside_a_repositorys_top(fake: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    off = runtime_for(fake, repo, tmp_path / "home", map_tokens=0)
    off.warm_map()
    assert off.map_warmup is None
    inside = runtime_for(fake, repo / "src", tmp_path / "home")
    inside.warm_map()
    assert inside.map_warmup is not None and inside.map_warmup.report is None
    inside.planner_map(NullSink())  # waits for nothing
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not MapWarmup(plain, tmp_path / "home", WatchedListings()).start()
    subprocess.run(["git", "init", "-q"], cwd=plain, check=True)
    assert MapWarmup(plain, tmp_path / "home", WatchedListings()).start()


def test_a_plans_map_and_map_wait_for_the_warm_up_before_listing(tmp_path: Path) -> None:
    """Whoever builds a map first waits for the session's warm-up (`ready`), then lists: never a map of
    an index still being built, nor a build lock given up on after 2 s."""
    from types import SimpleNamespace

    from paicli.repomap.files import workspace_files
    from paicli.repomap.repo_map import PlannerMap, RepoMap
    from paicli.ui.commands.map_view import _build, _Notices

    repo = make_repo(tmp_path / "repo")
    order: list[str] = []

    def lister(workspace: Path):  # type: ignore[no-untyped-def]
        order.append("listed")
        return workspace_files(workspace)

    planner_map = PlannerMap(
        RepoMap(repo, tmp_path / "home", NullSink(), lister=lister), NullSink(), ready=lambda: order.append("ready")
    )
    assert "src/shop/payments.py" in planner_map("refund in payments.py")
    assert order == ["ready", "listed"]
    order.clear()
    ctx = SimpleNamespace(
        workspace=repo, home=tmp_path / "home", map_tokens=3_000, map_lister=lister,
        map_ready=lambda: order.append("ready"),
    )  # fmt: skip
    assert "src/shop/payments.py" in _build(ctx, "refund in payments.py", _Notices()).text  # type: ignore[arg-type]
    assert order == ["ready", "listed"]
