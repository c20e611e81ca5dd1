"""One session, one set of folder listings (paicli/sandbox/memos.py): the sandbox's walk before a command,
the approval policy's git guard and the check for git-controlled paths a command made read the same
memo, passed in by the runtime, not a global of the process."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from pydantic import SecretStr

from paicli.common.events import NullSink
from paicli.config import Settings
from paicli.runtime import build_runtime
from paicli.sandbox import BwrapSandbox, choose_sandbox
from paicli.sandbox.gitdirs import find_git_paths
from paicli.tools.watched_listing import WatchedListings
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM


def test_the_runtime_passes_one_memo_to_the_sandbox_the_policy_and_the_tools(
    fake: FakeLLM, workspace: Path, tmp_path: Path
) -> None:
    settings = Settings(workspace=workspace, api_key=SecretStr(TEST_KEY), base_url=fake.base_url)
    runtime = build_runtime(settings, NullSink(), announce=False)
    memos = runtime.sandbox.memos
    assert runtime.policy.git_paths.folders is memos.git
    assert runtime.tool_context().folders is memos
    if isinstance(runtime.sandbox.sandbox, BwrapSandbox):
        assert runtime.sandbox.sandbox.memos is memos


def test_two_sessions_keep_their_own_memos(workspace: Path, tmp_path: Path) -> None:
    one = choose_sandbox("off", workspace=workspace, home=tmp_path)
    two = choose_sandbox("off", workspace=workspace, home=tmp_path)
    assert one.memos is not two.memos and one.memos.git is not two.memos.git
    (workspace / "sub" / ".git").mkdir(parents=True)
    find_git_paths(workspace, folders=one.memos.git)
    reads = one.memos.git.reads
    assert reads > 0 and two.memos.git.reads == 0  # the other session read nothing (caching: test_folders.py)


def test_the_runtime_keeps_one_watched_listing_for_its_plans(fake: FakeLLM, workspace: Path) -> None:
    settings = Settings(workspace=workspace, api_key=SecretStr(TEST_KEY), base_url=fake.base_url)
    runtime = build_runtime(settings, NullSink(), announce=False)
    assert isinstance(runtime.watched, WatchedListings)
    runtime.watched = WatchedListings(clock=lambda: time.time_ns() + 3 * 10**9)  # as if settled for 3 s
    (workspace / "pricing.py").write_text("def discount() -> int:\n    return 1\n")
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    runtime.planner_map(NullSink())("discount")
    runtime.planner_map(NullSink())("discount")  # a second plan: the same listings, nothing listed anew
    assert runtime.watched.listed == 1 or not sys.platform.startswith("linux")
    assert runtime.last_map is not None and runtime.last_map.repo_map.index.paths == ["pricing.py"]
