"""Start-up stays light (issue 16): what `paicli --version` and the REPL's first prompt load, checked in a
fresh interpreter. The REPL's behaviour around its first prompt (typing and completing before the rest is
built) is covered by the pty tests (tests/ui/prompt/test_mentions_pty.py types at once)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Loaded with the first answer, the first turn or the first plan, never before the first prompt.
LOADED_LATER = (
    "httpx2",
    "rich",
    "rich.markdown",
    "markdown_it",
    "pygments",
    "json_repair",
    "mcp",
    "paicli.runtime",
    "paicli.common.events",
    "paicli.llm.client",
    "paicli.agent.react",
    "paicli.plan.planner",
    "paicli.plan.scheduler",
    "paicli.policy.classify",
    "paicli.tools.toolbox",
    "paicli.app.checkpoints.service",
    "paicli.mcp.manager",
    "paicli.ui.repl",
    "paicli.ui.prompt.approval_prompt",
)


def modules_after(statement: str) -> set[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    return set(json.loads(done.stdout))


def test_the_command_line_module_loads_none_of_the_heavy_libraries() -> None:
    loaded = modules_after("import paicli.cli")
    assert not loaded & {"pydantic", "httpx2", "httpx", "rich", "prompt_toolkit", "paicli.config"}


@pytest.fixture(scope="module")
def before_the_first_prompt() -> set[str]:
    return modules_after("import paicli.cli, paicli.config, paicli.sandbox, paicli.ui.first_prompt")


@pytest.mark.parametrize("module", LOADED_LATER)
def test_the_first_prompt_loads_nothing_that_can_wait(module: str, before_the_first_prompt: set[str]) -> None:
    assert "prompt_toolkit" in before_the_first_prompt  # the check itself works
    assert module not in before_the_first_prompt


@pytest.mark.parametrize(
    ("text", "width", "lines"),
    [
        ("paicli 0.1.0 · model · /work/space", 20, ["paicli 0.1.0 · model", "· /work/space"]),
        ("one\ntwo words", 40, ["one", "two words"]),
        (
            "/a/very/long/workspace/path/that/does/not/fit",
            12,
            ["/a/very/long", "/workspace/p", "ath/that/doe", "s/not/fit"],
        ),
        ("", 40, [""]),
        ("well-known words", 10, ["well-known", "words"]),  # never broken at a hyphen
        ("/工作/项目/代码目录 x", 10, ["/工作/项目", "/代码目录", "x"]),  # CJK characters take two cells
        ("a  b\tc", 20, ["a b c"]),
    ],
)
def test_the_banner_wraps_at_spaces_and_folds_only_a_word_longer_than_a_line(
    text: str, width: int, lines: list[str]
) -> None:
    from paicli.ui.first_prompt import wrapped

    assert wrapped(text, width) == lines
