"""The documentation stays true to the code: docs/configuration.md is what its generator writes from
paicli/config.py, and every link and every repository path the Markdown files name leads somewhere."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
GENERATOR = REPO / "docs" / "generate_configuration.py"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_configuration", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_configuration_reference_is_generated_from_the_settings_model() -> None:
    generator = load_generator()
    current = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert current == generator.generated(), (
        "docs/configuration.md differs from the Settings model in paicli/config.py: "
        "run `python docs/generate_configuration.py` and commit the result"
    )


def test_every_setting_is_described() -> None:
    from paicli.config import Settings

    undescribed = [name for name, info in Settings.model_fields.items() if not info.description]
    assert not undescribed, f"add Field(description=...) in paicli/config.py for {', '.join(undescribed)}"


# ---- links -----------------------------------------------------------------------------------------

DOCUMENTS = [
    "README.md",
    "PAI.md",
    "BENCHMARKS.md",
    "bench/README.md",
    *sorted(f"docs/{page.name}" for page in (REPO / "docs").glob("*.md")),
]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\s]+)`")
REPO_PATH = re.compile(r"^(?:paicli|tests|bench|docs|prompts|\.ci)/[\w./-]*$")
# Paths that exist only once something has run: the benchmarks write their results there.
CREATED_AT_RUN_TIME = {"bench/results/"}


def prose(text: str) -> str:
    """The text outside fenced code blocks (a diagram or a command line there is not a link)."""
    kept, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return "\n".join(kept)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for line in prose(path.read_text(encoding="utf-8")).splitlines():
        if match := re.match(r"#{1,6}\s+(.*)", line):
            base = name = slug(match.group(1))
            number = 0
            while name in found:  # GitHub numbers a repeated heading
                number += 1
                name = f"{base}-{number}"
            found.add(name)
    return found


def broken_links(path: Path) -> list[str]:
    """What in `path` leads nowhere: relative links (and their #anchors) and backticked repository paths."""
    text = prose(path.read_text(encoding="utf-8"))
    problems = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            problems.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{target}: no heading with that anchor in {linked.name}")
    for named in CODE.findall(text):
        if REPO_PATH.match(named) and named not in CREATED_AT_RUN_TIME and not (REPO / named).exists():
            problems.append(f"`{named}`: no such file or folder in the repository")
    return problems


def test_every_link_and_repository_path_in_the_documentation_leads_somewhere() -> None:
    problems = [f"{name}: {problem}" for name in DOCUMENTS for problem in broken_links(REPO / name)]
    assert not problems, "broken links or paths in the documentation:\n" + "\n".join(problems)


def test_the_link_check_finds_a_missing_file_a_missing_heading_and_a_missing_path(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A title\n\n[a](missing.md) [b](#nowhere) [c](#a-title) `paicli/no_such_module.py` `paicli/cli.py`\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "#nowhere: no heading with that anchor in page.md",
        "`paicli/no_such_module.py`: no such file or folder in the repository",
    ]
    assert "exit-codes" in anchors(REPO / "docs" / "contract.md")
    assert slug("`[mcp_servers.NAME]`: MCP servers") == "mcp_serversname-mcp-servers"


def load_quickstart() -> ModuleType:
    from importlib.machinery import SourceFileLoader

    path = str(REPO / ".ci" / "quickstart")
    module = ModuleType("quickstart")
    module.__file__ = path
    SourceFileLoader("quickstart", path).exec_module(module)
    return module


def test_the_quick_start_has_its_tested_blocks_and_ci_runs_them() -> None:
    """CI runs them (.ci/quickstart, after .ci/run's install): here only that they are there, cheaply."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    install, first_use = load_quickstart().tested_blocks(readme)
    assert "python3 -m venv .venv" in install and "pip install" in install and "paicli --version" in install
    assert "pipx" in install  # as the alternative, never the only way
    assert "PAICLI_BASE_URL=http://127.0.0.1:8080/v1" in first_use and "paicli doctor" in first_use
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "python .ci/quickstart" in ci
    quick_start = readme[readme.index("## Quick start") : readme.index("\n## ", readme.index("## Quick start"))]
    assert "--provider" in quick_start and "PAICLI_BASE_URL" in quick_start  # how to point it anywhere
    # CI installs and tests exactly as the README says: those two commands stay as they are
    assert "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[dev]'" in readme
    assert "python3 -m venv .venv\n. .venv/bin/activate\n" in ci and "pip install --quiet -e '.[dev]'" in ci
    assert "```bash\npython -m pytest\n```" in readme
