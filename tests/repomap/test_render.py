"""Rendering the map: the whole text within its budget, symbols only where the budget has room for them."""

from __future__ import annotations

import re

from paicli.llm.tokens import estimate_text
from paicli.repomap.render import SYMBOLS_FROM, render
from paicli.repomap.tags import Symbol

PATHS = [f"pkg/sub_{n % 7}/module_{n}.py" for n in range(2_000)]


def symbols_of(path: str) -> list[Symbol]:
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    return [Symbol(f"{stem}_run", "def", 1, f"def {stem}_run(value: int) -> int", 0)]


def test_the_whole_text_fits_the_budget_and_no_path_more_would() -> None:
    for budget in (200, 1_000, 3_000, 6_000):
        rendered = render(PATHS, [], PATHS, symbols_of, budget)
        assert rendered.tokens == estimate_text(rendered.text) <= budget
        following = PATHS[len(rendered.files)]
        assert estimate_text(rendered.text + "\n" + following) > budget  # no room left for one more path


def test_a_small_map_names_paths_only_but_the_files_the_goal_names_keep_their_symbols() -> None:
    named = [PATHS[5]]
    small = render(PATHS, named, PATHS, symbols_of, SYMBOLS_FROM - 1)
    assert small.with_symbols == 1 and "def module_5_run" in small.text
    assert "def module_0_run" not in small.text and "## Also relevant" not in small.text
    assert small.text.index("## Named in the goal") < small.text.index("## Most relevant files")


def test_a_map_from_symbols_from_shows_the_top_files_with_their_symbols_then_paths() -> None:
    rendered = render(PATHS, [], PATHS, symbols_of, SYMBOLS_FROM)
    assert rendered.with_symbols >= 1 and "  def module_0_run(value: int) -> int" in rendered.text
    most, also = rendered.text.split("## Most relevant files")[1].split("## Also relevant")
    assert "module_0.py" in most and "module_0_run" in most and PATHS[100] in also and "_100_run" not in also


def test_paths_outside_ascii_count_one_token_a_character() -> None:
    paths = [f"données/été_{n}.py" for n in range(500)]
    rendered = render(paths, [], paths, lambda _path: [], 400)
    assert rendered.tokens == estimate_text(rendered.text) <= 400
    assert 0 < len(rendered.files) < 500


TOP_FILES = ["yarn.lock", "package.json", ".yarnrc.yml", "Makefile", "setup.py"]
SMALL_FOLDERS = [f"{folder}/x/f{n}.js" for folder in ("lib", "docs", "tools", ".github") for n in range(40)]
MIXED = [*TOP_FILES, *SMALL_FOLDERS, *PATHS]


def test_the_layout_names_every_top_folder_and_every_top_level_file() -> None:
    rendered = render(MIXED, [], [], symbols_of, 3_000)
    layout = rendered.text.split("## Layout (files per folder)")[1]
    assert "pkg/ 2000: sub_0/ 286" in layout  # the biggest with their largest subfolders
    for folder in ("lib/ 40", "docs/ 40", "tools/ 40", ".github/ 40"):
        assert folder in layout
    assert "top-level files: .yarnrc.yml, Makefile, package.json, setup.py, yarn.lock" in layout
    assert set(TOP_FILES) <= set(rendered.files)


def test_a_ranked_top_level_file_is_not_named_twice_but_keeps_its_symbols() -> None:
    paths_only = render(MIXED, [], ["setup.py", *PATHS], symbols_of, SYMBOLS_FROM - 1)
    assert paths_only.text.count("setup.py") == 1 and paths_only.files.count("setup.py") == 1
    detailed = render(MIXED, [], ["setup.py", *PATHS], symbols_of, SYMBOLS_FROM)
    assert detailed.text.count("setup.py") == 2 and "def setup_run(value: int) -> int" in detailed.text


def test_top_level_files_beyond_their_share_keep_the_best_ranked_and_say_how_many_more() -> None:
    many = [f"config_{n:03}.toml" for n in range(300)]
    ranked = ["config_299.toml", "config_150.toml"]
    for budget in (200, 1_000, 3_000):
        rendered = render([*many, *PATHS], [], ranked, symbols_of, budget)
        assert rendered.tokens <= budget
        layout = rendered.text.split("## Layout (files per folder)")[1].split("\n##")[0]
        if budget >= 1_000:
            assert "config_299.toml" in layout and "config_150.toml" in layout
            assert "config_000.toml" in layout  # the unranked ones in name order
            assert re.search(r", … \d+ more$", layout.strip())
        else:
            assert "300 top-level files" in layout or "… " in layout
