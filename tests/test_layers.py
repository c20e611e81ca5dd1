"""The architecture as a test: no import cycle anywhere in paicli/, neither between modules nor between
the parts they belong to (`paicli.llm.client` is part of `llm`), and layers import downwards only
(ui/headless → app → plan → agent → policy → tools → llm → events/errors/values). Every import counts, also
those inside functions and under TYPE_CHECKING, and a "paicli.module:function" string (the slash-command
table names handlers so, imported on first use)."""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "paicli"
# Layer of each top-level part of paicli; a module may import only from its own layer or lower ones. Not
# formatted: a table, the layers read in order.
LAYERS = {
    "common": 0, "secret_handoff": 0, "shell": 0, "__init__": 0,
    "llm": 1, "sandbox": 1, "tools": 2, "policy": 3, "trust": 3, "trusted_folders": 3, "mcp": 3, "repomap": 3,
    "config": 4, "config_sources": 4, "agent": 5,
    "plan": 6, "runtime": 7, "plan_wiring": 7,
    "app": 8, "ui": 9, "headless": 9, "doctor": 9, "map_command": 9, "eval": 9, "cli": 10,
    "process_exit": 11, "__main__": 11,
}  # fmt: skip
FRONT_ENDS = ("ui", "headless", "doctor", "map_command")
HANDLER = re.compile(r"paicli(\.\w+)+:\w+")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache  # read once per test process: the tests only read it
def import_graph() -> dict[str, set[str]]:
    modules = {module_name(path): path for path in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and HANDLER.fullmatch(node.value):
                targets = [node.value.partition(":")[0]]  # a "module:function" the code imports by name
            else:
                continue
            graph[name] |= {t for t in targets if t in modules and t != name and not name.startswith(t + ".")}
    return graph


def part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "__init__"


def part_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph with each module collapsed to its part: `llm` imports `events` when any module of
    paicli/llm/ imports any module of events."""
    parts: dict[str, set[str]] = {part(module): set() for module in graph}
    for module, targets in graph.items():
        parts[part(module)] |= {part(target) for target in targets} - {part(module)}
    return parts


def cycles_in(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles


def test_there_is_no_import_cycle() -> None:
    cycles = cycles_in(import_graph())
    assert cycles == [], "import cycles: " + "; ".join(" → ".join(c) for c in cycles)


def test_there_is_no_import_cycle_between_parts() -> None:
    """Modules may import each other without a cycle and still tie their parts together (common/events.py once
    imported paicli/llm/types.py while paicli/llm/client.py imported events): a part is read, moved
    and tested as a whole only when the parts form no cycle either."""
    cycles = cycles_in(part_graph(import_graph()))
    assert cycles == [], "cycles between parts: " + "; ".join(" → ".join(c) for c in cycles)


def test_the_part_graph_sees_a_cycle_between_parts() -> None:
    graph = {
        "paicli.common.events": {"paicli.llm.types"},
        "paicli.llm.types": set(),
        "paicli.llm.client": {"paicli.common.events"},
    }
    assert cycles_in(graph) == []
    assert cycles_in(part_graph(graph)) == [["common", "llm", "common"]]


def test_the_shared_values_need_nothing_but_pydantic() -> None:
    """The bottom layer's values (and the events that carry them) import only the standard library, pydantic
    and paicli's own bottom layer."""
    for name in ("common/values.py", "common/events.py"):
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        outside = {module for module in imported if module.split(".")[0] not in {*sys.stdlib_module_names, "pydantic"}}
        assert all(LAYERS[part(module)] == 0 for module in outside), f"{name} imports {sorted(outside)}"


def test_layers_import_downwards_only() -> None:
    wrong = []
    for module, targets in import_graph().items():
        for target in targets:
            if LAYERS[part(target)] > LAYERS[part(module)]:
                wrong.append(f"{module} → {target}")
    assert wrong == []


def test_front_ends_do_not_import_each_other() -> None:
    wrong = [
        f"{module} → {target}"
        for module, targets in import_graph().items()
        for target in targets
        if part(module) in FRONT_ENDS and part(target) in FRONT_ENDS and part(module) != part(target)
    ]
    assert wrong == []


def test_the_graph_sees_function_level_imports() -> None:
    graph = import_graph()
    assert "paicli.ui.prompt.mentions" in graph["paicli.ui.repl"]  # imported inside a method
    # named in the table as "module:function"
    assert "paicli.ui.commands.plan_command" in graph["paicli.ui.commands.table"]


# Inside the front end, too: rendering knows no prompt, the prompt line no plan screen, the slash commands sit
# on all three, and the REPL (repl.py, first_prompt.py at ui/'s top) on everything.
UI_LAYERS = {"chat": 0, "prompt": 1, "plan": 2, "commands": 3}


def ui_layer(module: str) -> int:
    pieces = module.split(".")
    return UI_LAYERS.get(pieces[2], len(UI_LAYERS)) if len(pieces) > 2 else len(UI_LAYERS)


def test_the_ui_folders_import_downwards_only() -> None:
    wrong = [
        f"{module} → {target}"
        for module, targets in import_graph().items()
        if part(module) == "ui"
        for target in targets
        if part(target) == "ui" and ui_layer(target) > ui_layer(module)
    ]
    assert wrong == []
    assert ui_layer("paicli.ui.chat.render") < ui_layer("paicli.ui.commands.table") < ui_layer("paicli.ui.repl")
