"""Ranking and rendering: what the goal names first, BM25, the code's links, the budget, no ignored path."""

from __future__ import annotations

from pathlib import Path

from paicli.common.events import ListSink
from paicli.repomap import rank
from paicli.repomap.repo_map import RepoMap
from tests.repomap.maprepo import make_repo


def map_of(repo: Path, home: Path, goal: str, tokens: int = 3_000) -> str:
    repo_map = RepoMap(repo, home, ListSink(), map_tokens=tokens)
    try:
        return repo_map.for_goal(goal).text
    finally:
        repo_map.close()


def test_files_the_goal_names_come_first_with_their_symbols(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    text = map_of(repo, tmp_path / "home", "Change prices.py and @src/shop/payments.py")
    named = text.split("## Named in the goal")[1]
    assert named.index("src/shop/prices.py") < named.index("src/shop/payments.py")
    assert "def discount_for(cart: object) -> int" in named
    assert "def charge(self, amount: int) -> None" in named


def test_goal_words_rank_files_and_links_widen_them(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    text = map_of(repo, tmp_path / "home", "The cart total is wrong")
    files = text.split("## Most relevant files")[1]
    assert files.index("src/shop/cart.py") < files.index("src/shop/prices.py")  # cart.py uses discount_for
    assert "tests/test_cart.py" in files


def test_the_layout_counts_files_per_folder_and_ignored_files_never_show(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    text = map_of(repo, tmp_path / "home", "GeneratedCart in build/generated_cart.py")
    assert "src/ 4: shop/ 4" in text
    assert "build" not in text and "GeneratedCart" not in text


def test_the_map_keeps_to_its_budget(tmp_path: Path) -> None:
    extra = {f"pkg/mod_{n}.py": f"def cart_helper_{n}(x: int) -> int:\n    return x\n" for n in range(300)}
    repo = make_repo(tmp_path / "repo", extra=extra)
    for budget in (300, 1_000, 3_000):
        repo_map = RepoMap(repo, tmp_path / "home", ListSink(), map_tokens=budget)
        result = repo_map.for_goal("cart helper")
        repo_map.close()
        assert result.rendered.tokens <= budget
    assert len(result.rendered.files) > 100  # paths only, after the detailed ones


def test_named_files_by_path_name_and_module() -> None:
    paths = ["paicli/agent/context.py", "paicli/plan/planner.py", "a/util.py", "b/util.py", "c/util.py", "d/util.py"]
    assert rank.named_files("see paicli.agent.context and planner.py", paths) == [
        "paicli/agent/context.py",
        "paicli/plan/planner.py",
    ]
    assert rank.named_files("fix util.py", paths) == []  # four files of that name: none is meant more than another
    assert rank.named_files("no files here, e.g. prose.", paths) == []


def test_a_files_tests_are_found_by_their_names() -> None:
    paths = ["src/cart.py", "tests/test_cart.py", "pkg/cart_test.go", "web/cart.test.ts", "src/CartTest.java"]
    assert rank.tests_for("src/cart.py", paths) == ["tests/test_cart.py"]
    assert rank.tests_for("pkg/cart.go", paths) == ["pkg/cart_test.go"]
    assert rank.tests_for("web/cart.ts", paths) == ["web/cart.test.ts"]
    assert rank.tests_for("src/Cart.java", paths) == ["src/CartTest.java"]


def test_folders_the_goal_names_by_a_compound_name() -> None:
    paths = [
        "packages/babel-register/src/index.ts",
        "packages/babel-standalone/src/index.ts",
        "packages/babel-parser/src/parser.ts",
        "eslint/babel-eslint-plugin/src/index.js",
        "a/b/c/deep-name/x.py",  # below the top three levels
        "one/shared-name/x.py",
        "two/shared-name/x.py",
        "three/shared-name/x.py",
        "four/shared-name/x.py",
        "src/x.py",
    ]
    assert rank.named_folders("fix(babel-register): keep the app's shutdown", paths) == ("packages/babel-register/",)
    assert rank.named_folders("Add types for `@babel/standalone`", paths) == ("packages/babel-standalone/",)
    assert rank.named_folders("fix @babel/eslint-plugin peer deps", paths) == ("eslint/babel-eslint-plugin/",)
    assert rank.named_folders("change deep-name", paths) == ()
    assert rank.named_folders("change shared-name", paths) == ()  # four folders of that name: none is meant
    assert rank.named_folders("fix the parser in src", paths) == ()  # plain words name no folder


def test_files_in_a_folder_the_goal_names_rank_above_the_same_words_elsewhere(tmp_path: Path) -> None:
    same = "export function shutdown() { graceful(); }\n"
    extra = {"packages/core-utils/src/worker.ts": same, "packages/utils-core/src/worker.ts": same}  # same words
    repo = make_repo(tmp_path / "repo", extra=extra)
    text = map_of(repo, tmp_path / "home", "fix(core-utils): graceful shutdown")
    assert text.index("packages/core-utils/src/worker.ts") < text.index("packages/utils-core/src/worker.ts")
    text = map_of(repo, tmp_path / "home", "fix(utils-core): graceful shutdown")
    assert text.index("packages/utils-core/src/worker.ts") < text.index("packages/core-utils/src/worker.ts")
