"""The architecture as a test: no import cycle anywhere in paicli/, and layers import downwards only
(ui/headless → app → plan → agent → policy → tools → llm → events/errors). Every import counts, also
those inside functions and under TYPE_CHECKING."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "paicli"
# Layer of each top-level part of paicli; a module may import only from its own layer or lower ones.
LAYERS = {
    "errors": 0, "kinds": 0, "events": 1, "sanitize": 0, "secret_handoff": 0, "shell": 0, "llm": 1, "sandbox": 1,
    "tools": 2, "policy": 3, "audit": 3, "trust": 3, "mcp": 3, "config": 4, "agent": 5, "plan": 6, "runtime": 7,
    "app": 8, "ui": 9, "headless": 9, "doctor": 9, "cli": 10, "process_exit": 11, "__main__": 11, "__init__": 0,
}  # fmt: skip
FRONT_ENDS = ("ui", "headless", "doctor")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


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
            else:
                continue
            graph[name] |= {t for t in targets if t in modules and t != name and not name.startswith(t + ".")}
    return graph


def part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "__init__"


def test_there_is_no_import_cycle() -> None:
    graph = import_graph()
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

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == [], "import cycles: " + "; ".join(" → ".join(c) for c in cycles)


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
    assert "paicli.ui.plan_command" in graph["paicli.ui.commands"]  # imported inside a handler
