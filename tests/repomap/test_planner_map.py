"""The planner's request carries the map for its goal (end to end over the fake server); its system prompt
stays byte-identical across goals; `paicli map` prints the map without a model."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, plan_json, script_summary, system_is, task_is
from tests.repomap.maprepo import make_repo


def planner_requests(fake: FakeLLM) -> list[list[dict[str, str]]]:
    return [r.messages for r in fake.requests if r.messages and PLANNER in r.messages[0]["content"]]


def test_the_planner_request_holds_the_named_files_and_no_ignored_path(
    fake: FakeLLM, tmp_path: Path, home: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})), repeat=True)
    fake.on(task_is("a"), Reply.text("done"), repeat=True)
    script_summary(fake, "Done.")
    goals = ["Give PaymentGateway a refund method in payments.py", "The cart total ignores discounts"]
    for goal in goals:
        done = run_paicli(["-C", str(repo), "plan", goal, "--yes", "--json"], paicli_env(fake, home))
        assert done.code == 0, done.stderr
    first, second = planner_requests(fake)
    assert first[0]["content"] == second[0]["content"]  # the system prompt: the same for every goal
    assert "src/shop/" not in first[0]["content"]
    user = first[1]["content"]
    assert "# Repository map" in user
    assert "src/shop/payments.py\n  class PaymentGateway" in user.split("## Named in the goal")[1]
    assert "build/" not in user and "GeneratedCart" not in user  # git-ignored
    assert "src/shop/cart.py" in second[1]["content"].split("## Most relevant files")[1]
    assert not (repo / ".paicli" / "index").exists()


def test_map_tokens_zero_leaves_the_map_out(fake: FakeLLM, tmp_path: Path, home: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (home / ".paicli" / "config.toml").write_text("retry_backoff = 0.01\nreview = false\nmap_tokens = 0\n")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})))
    fake.on(task_is("a"), Reply.text("done"))
    script_summary(fake, "Done.")
    done = run_paicli(["-C", str(repo), "plan", "cart", "--yes", "--json"], paicli_env(fake, home))
    assert done.code == 0, done.stderr
    assert "# Repository map" not in planner_requests(fake)[0][1]["content"]


def test_paicli_map_prints_the_map_and_its_figures(tmp_path: Path, home: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    done = run_paicli(["map", "refund in payments.py", "-C", str(repo)], env)
    assert done.code == 0, done.stderr
    assert done.stdout.startswith("# Repository map")
    assert "src/shop/payments.py" in done.stdout and "map tokens" in done.stderr
    as_json = run_paicli(["-C", str(repo), "map", "cart", "--json", "--tokens", "500"], env)
    assert as_json.code == 0, as_json.stderr
    summary = json.loads(as_json.stdout)
    assert summary["map_tokens"] == 500 and summary["tokens"] <= 500
    assert set(summary["files"][:2]) == {"src/shop/cart.py", "tests/test_cart.py"}
    assert summary["index"]["read"] == 0  # the first run built the index
    assert run_paicli(["map", "--tokens", "x"], env).code == 2
