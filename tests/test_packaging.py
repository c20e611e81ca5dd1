"""The wheel carries every prompt: build it, install it into a separate folder, and load each prompt from there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_wheel_ships_every_prompt(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), REPO],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("paicli-*.whl")
    site = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert installed.returncode == 0, installed.stderr
    prompts = site / "paicli" / "_prompts"
    shipped = sorted(p.relative_to(prompts).as_posix() for p in prompts.glob("**/*.md"))
    in_repo = sorted(p.relative_to(REPO / "prompts").as_posix() for p in (REPO / "prompts").glob("**/*.md"))
    assert shipped == in_repo and "modes/planner.md" in shipped
    probe = (
        "import sys, pathlib; sys.path.insert(0, sys.argv[1]);"
        "from paicli.agent.context import load_prompt, packaged_prompts_dir;"
        "assert packaged_prompts_dir().parent.parent == pathlib.Path(sys.argv[1]), packaged_prompts_dir();"
        "[load_prompt(n, pathlib.Path('.')) for n in sys.argv[2:]]; print('ok')"
    )
    loaded = subprocess.run(
        [sys.executable, "-I", "-c", probe, str(site), *shipped],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert loaded.stdout.strip() == "ok", loaded.stderr


def test_every_runtime_dependency_is_imported_by_paicli() -> None:
    import ast
    import re
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    names = {re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].lower().replace("-", "_") for spec in declared}
    imported_as = {"google_re2": "re2"}  # a distribution whose module has another name
    names = {imported_as.get(name, name) for name in names}
    imported: set[str] = set()
    for path in (REPO / "paicli").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        by_name = "import_module" in text  # modules imported by a name in a string (the map's grammars)
        for node in ast.walk(ast.parse(text)):
            if by_name and isinstance(node, ast.Constant) and isinstance(node.value, str):
                imported.add(node.value.lower())
            elif isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0].lower() for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0].lower())
    # Declared for a library's sake, not imported by paicli: each with the reason it earns its place (none now:
    # sniffio was one while httpcore searched for it at every request; httpcore2 looks once).
    for_a_library: set[str] = set()
    assert names - imported == for_a_library, "declared but never imported"
