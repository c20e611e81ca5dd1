"""Planner replies as models really write them, each labelled with what `parse_plan_reply` must do.

`Accept(tasks=[(id, type, dependencies), ...])` — the plan that must come out, in the model's order
(with `files` and `actions`: exactly the tasks that declare them, with these values).
`Reject("text")` — a PlanError whose message contains the text.
Replies with the plan contract's fields, checked against the contract too, are in corpus_contract.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from paicli.plan.model import Plan

TaskSpec = tuple[str, str, list[str]]


@dataclass(frozen=True)
class Accept:
    tasks: list[TaskSpec]
    summary: str | None = None  # checked when given
    files: dict[str, list[str]] | None = None  # id → its declared files, for every task with some (when given)
    actions: dict[str, tuple[str, dict[str, Any]]] | None = None  # id → (tool, args), likewise

    def matches(self, plan: Plan) -> bool:
        """Whether `plan` is exactly the plan this label describes."""
        if [(t.id, t.type.value, t.dependencies) for t in plan.tasks] != self.tasks:
            return False
        if self.summary is not None and plan.summary != self.summary:
            return False
        if self.files is not None and {t.id: t.files for t in plan.tasks if t.files is not None} != self.files:
            return False
        actions = {t.id: (t.action.tool, t.action.args) for t in plan.tasks if t.action is not None}
        return self.actions is None or actions == self.actions


@dataclass(frozen=True)
class Reject:
    contains: str


@dataclass(frozen=True)
class Case:
    name: str
    reply: str
    expect: Accept | Reject
    finish_reason: str | None = "stop"
    external_ids: frozenset[str] = field(default_factory=frozenset)
    max_tasks: int = 50
    contract: bool = False  # also checked against the plan contract, as the planner does (corpus_contract.py)


def task(id: Any, description: str = "do it", type: str = "ANALYSIS", deps: Any = None, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"id": id, "description": description, "type": type, "dependencies": deps or []}
    item.update(extra)
    return item


def plan_json(*tasks: dict[str, Any], summary: str = "the plan", indent: int | None = 2) -> str:
    return json.dumps({"summary": summary, "tasks": list(tasks)}, indent=indent, ensure_ascii=False)


THREE = plan_json(
    task("task_1", "Read src/app.py", "FILE_READ"),
    task("task_2", "Add a --verbose flag to src/app.py", "FILE_WRITE", ["task_1"]),
    task("task_3", "Run pytest -q", "VERIFICATION", ["task_2"]),
    summary="add a verbose flag",
)
THREE_EXPECTED = [
    ("task_1", "FILE_READ", []),
    ("task_2", "FILE_WRITE", ["task_1"]),
    ("task_3", "VERIFICATION", ["task_2"]),
]
ONE = plan_json(task("task_1", "Answer the question", "ANALYSIS"))
ONE_EXPECTED = [("task_1", "ANALYSIS", [])]
OTHER = plan_json(task("x", "something else"))
TRUNCATE_ME = plan_json(
    task("task_1", "Read README.md", "FILE_READ"),
    task("task_2", "List the tests folder", "COMMAND"),
    task("task_3", "Summarize both", "ANALYSIS", ["task_1", "task_2"]),
)
CHAIN_OF = plan_json(*(task(f"t{i}", f"step {i}", deps=[f"t{i - 1}"] if i else []) for i in range(50)), indent=None)
TOO_MANY = plan_json(*(task(f"t{i}", f"step {i}") for i in range(51)), indent=None)
HUGE = plan_json(*(task(f"t{i}", f"step {i} " + "x" * 200) for i in range(500)), indent=None)
LONG_PROSE = "Let me think about this carefully. " * 6000  # ~200 KB around a small plan


CASES: list[Case] = [
    # ---- accepted: form variations ----------------------------------------------------------------
    Case("canonical", THREE, Accept(THREE_EXPECTED, summary="add a verbose flag")),
    Case("compact one line", plan_json(task("a", "x", "COMMAND"), indent=None), Accept([("a", "COMMAND", [])])),
    Case("json fence", f"```json\n{THREE}\n```", Accept(THREE_EXPECTED)),
    Case("JSON fence label in capitals", f"```JSON\n{THREE}\n```", Accept(THREE_EXPECTED)),
    Case("bare fence", f"```\n{THREE}\n```", Accept(THREE_EXPECTED)),
    Case("fence with json on the fence line", f"```{ONE}```", Accept(ONE_EXPECTED)),
    Case("prose before", f"Here's the plan you asked for:\n\n{THREE}", Accept(THREE_EXPECTED)),
    Case("prose after", f"{THREE}\n\nLet me know if you'd like changes.", Accept(THREE_EXPECTED)),
    Case(
        "prose around a fence",
        f"Sure! I'll break it down.\n```json\n{THREE}\n```\nEach task is small (as requested).",
        Accept(THREE_EXPECTED),
    ),
    Case("closing fence at the end of the last json line", f"```json\n{THREE}```\nDone.", Accept(THREE_EXPECTED)),
    Case("indented fence", "  ```json\n" + THREE + "\n  ```", Accept(THREE_EXPECTED)),
    Case(
        "triple backticks inside a description",
        plan_json(task("a", "Add a ```bash``` example to README.md", "FILE_WRITE"), indent=None),
        Accept([("a", "FILE_WRITE", [])]),
    ),
    Case(
        "triple backticks inside a fenced description",
        "```json\n" + plan_json(task("a", "Wrap the snippet in ```python fences", "FILE_WRITE")) + "\n```",
        Accept([("a", "FILE_WRITE", [])]),
    ),
    Case("unclosed fence around complete json", f"```json\n{THREE}\n", Accept(THREE_EXPECTED)),
    Case(
        "bare array",
        json.dumps([task("task_1", "Read a", "FILE_READ"), task("task_2", "Sum up", "ANALYSIS", ["task_1"])]),
        Accept([("task_1", "FILE_READ", []), ("task_2", "ANALYSIS", ["task_1"])], summary=""),
    ),
    Case(
        "bare array in a fence",
        "```json\n" + json.dumps([task("a", "x")]) + "\n```",
        Accept([("a", "ANALYSIS", [])]),
    ),
    Case(
        "trailing commas",
        '{"summary": "s", "tasks": [{"id": "a", "description": "x", "type": "COMMAND", "dependencies": [],},'
        ' {"id": "b", "description": "y", "dependencies": ["a",],},],}',
        Accept([("a", "COMMAND", []), ("b", "ANALYSIS", ["a"])]),
    ),
    Case(
        "single quotes",
        "{'summary': 's', 'tasks': [{'id': 'a', 'description': 'read it', 'type': 'FILE_READ', "
        "'dependencies': []}, {'id': 'b', 'description': 'use it', 'dependencies': ['a']}]}",
        Accept([("a", "FILE_READ", []), ("b", "ANALYSIS", ["a"])]),
    ),
    Case(
        "comments in the json",
        '{"tasks": [\n  // first look\n  {"id": "a", "description": "x"},\n  /* then act */\n'
        '  {"id": "b", "description": "y", "dependencies": ["a"]}\n]}',
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", ["a"])]),
    ),
    Case(
        "missing comma between tasks",
        '{"tasks": [{"id": "a", "description": "x"} {"id": "b", "description": "y", "dependencies": ["a"]}]}',
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", ["a"])]),
    ),
    Case(
        "python literals",
        "{'tasks': [{'id': 'a', 'description': 'x', 'dependencies': None, 'optional': True}]}",
        Accept([("a", "ANALYSIS", [])]),
    ),
    Case("steps instead of tasks", json.dumps({"steps": [task("a", "x")]}), Accept([("a", "ANALYSIS", [])])),
    Case(
        "plan wrapper",
        json.dumps({"plan": {"summary": "wrapped", "tasks": [task("a", "x")]}}),
        Accept([("a", "ANALYSIS", [])], summary="wrapped"),
    ),
    Case(
        "tasks keyed by id",
        json.dumps({"tasks": {"a": {"description": "x"}, "b": {"description": "y", "dependencies": ["a"]}}}),
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", ["a"])]),
    ),
    Case("summary missing", json.dumps({"tasks": [task("a", "x")]}), Accept([("a", "ANALYSIS", [])], summary="")),
    Case("finish reason unknown", THREE, Accept(THREE_EXPECTED), finish_reason=None),
    # ---- accepted: aliases and value repairs ------------------------------------------------------
    Case(
        "depends_on alias",
        plan_json({"id": "a", "description": "x"}, {"id": "b", "description": "y", "depends_on": ["a"]}),
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", ["a"])]),
    ),
    Case(
        "deps alias",
        plan_json({"id": "a", "description": "x"}, {"id": "b", "description": "y", "deps": ["a"]}),
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", ["a"])]),
    ),
    Case(
        "dependsOn alias",
        plan_json({"id": "a", "description": "x"}, {"id": "b", "description": "y", "dependsOn": ["a"]}),
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", ["a"])]),
    ),
    Case(
        "task_id and task_type aliases",
        plan_json({"task_id": "a", "description": "x", "task_type": "command"}),
        Accept([("a", "COMMAND", [])]),
    ),
    Case(
        "numeric ids and dependencies",
        plan_json({"id": 1, "description": "x"}, {"id": 2, "description": "y", "dependencies": [1]}),
        Accept([("1", "ANALYSIS", []), ("2", "ANALYSIS", ["1"])]),
    ),
    Case(
        "numeric ids with string dependencies",
        plan_json({"id": 1, "description": "x"}, {"id": 2.0, "description": "y", "dependencies": ["1"]}),
        Accept([("1", "ANALYSIS", []), ("2", "ANALYSIS", ["1"])]),
    ),
    Case(
        "lower-case types",
        plan_json(task("a", "x", "file_read"), task("b", "y", "file_write"), task("c", "z", "verification")),
        Accept([("a", "FILE_READ", []), ("b", "FILE_WRITE", []), ("c", "VERIFICATION", [])]),
    ),
    Case(
        "mixed-case and dashed types",
        plan_json(task("a", "x", "File_Write"), task("b", "y", "file-read"), task("c", "z", " Command ")),
        Accept([("a", "FILE_WRITE", []), ("b", "FILE_READ", []), ("c", "COMMAND", [])]),
    ),
    Case("unknown type becomes analysis", plan_json(task("a", "x", "RESEARCH")), Accept([("a", "ANALYSIS", [])])),
    Case("missing type becomes analysis", plan_json({"id": "a", "description": "x"}), Accept([("a", "ANALYSIS", [])])),
    Case("non-string type becomes analysis", plan_json(task("a", "x", 7)), Accept([("a", "ANALYSIS", [])])),  # type: ignore[arg-type]
    Case(
        "dependency as a single string",
        plan_json(task("a", "x"), {"id": "b", "description": "y", "dependencies": "a"}),
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", ["a"])]),
    ),
    Case(
        "dependencies as a comma-separated string",
        plan_json(task("a", "x"), task("b", "y"), {"id": "c", "description": "z", "dependencies": "a, b"}),
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", []), ("c", "ANALYSIS", ["a", "b"])]),
    ),
    Case(
        "dependency id containing a space given as a string",
        plan_json(task("step one", "x"), {"id": "step two", "description": "y", "dependencies": "step one"}),
        Accept([("step one", "ANALYSIS", []), ("step two", "ANALYSIS", ["step one"])]),
    ),
    Case(
        "dependencies 'none' and null",
        plan_json(
            {"id": "a", "description": "x", "dependencies": "none"},
            {"id": "b", "description": "y", "dependencies": None},
        ),
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", [])]),
    ),
    Case(
        "dependency as a bare number",
        plan_json({"id": 1, "description": "x"}, {"id": 2, "description": "y", "dependencies": 1}),
        Accept([("1", "ANALYSIS", []), ("2", "ANALYSIS", ["1"])]),
    ),
    Case(
        "dependencies as objects with ids",
        plan_json(task("a", "x"), {"id": "b", "description": "y", "dependencies": [{"id": "a"}]}),
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", ["a"])]),
    ),
    Case(
        "duplicate and blank dependency entries are dropped",
        plan_json(task("a", "x"), task("b", "y"), task("c", "z", deps=["a", "b", "a", " ", "b"])),
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", []), ("c", "ANALYSIS", ["a", "b"])]),
    ),
    Case(
        "whitespace around ids is trimmed",
        plan_json(task(" a ", "x"), task("b\n", "y", deps=[" a"])),
        Accept([("a", "ANALYSIS", []), ("b", "ANALYSIS", ["a"])]),
    ),
    Case("title instead of description", plan_json({"id": "a", "title": "Read it"}), Accept([("a", "ANALYSIS", [])])),
    Case(
        "name instead of blank description",
        plan_json({"id": "a", "description": " ", "name": "Do"}),
        Accept([("a", "ANALYSIS", [])]),
    ),
    Case(
        "dependencies listed before their tasks",
        plan_json(task("c", "z", deps=["b"]), task("b", "y", deps=["a"]), task("a", "x")),
        Accept([("c", "ANALYSIS", ["b"]), ("b", "ANALYSIS", ["a"]), ("a", "ANALYSIS", [])]),
    ),
    Case(
        "dependencies on completed tasks of an earlier round",
        plan_json(task("task_4", "fix", "FILE_WRITE", ["task_1", "task_2"])),
        Accept([("task_4", "FILE_WRITE", ["task_1", "task_2"])]),
        external_ids=frozenset({"task_1", "task_2"}),
    ),
    # ---- accepted: content that looks like structure ------------------------------------------------
    Case(
        "braces and quotes inside strings",
        plan_json(task("a", 'Replace "{name}" with [value] in config.json; don\'t touch \\ paths', "FILE_WRITE")),
        Accept([("a", "FILE_WRITE", [])]),
    ),
    Case(
        "apostrophes in prose and descriptions",
        "Here's what I'd do - it's simple:\n" + plan_json(task("a", "Don't delete the user's files")),
        Accept([("a", "ANALYSIS", [])]),
    ),
    Case("unicode", plan_json(task("a", "Übersetze die Datei — 日本語 ✓")), Accept([("a", "ANALYSIS", [])])),
    Case(
        "balanced brackets in prose",
        f"Plan [draft 2] for {{the goal}}:\n{THREE}\nSee [1].",
        Accept(THREE_EXPECTED),
    ),
    Case(
        "shell fence with unbalanced brackets is ignored",
        f"First check with:\n```bash\ntest [ -f x && echo {{\n```\n{ONE}",
        Accept(ONE_EXPECTED),
    ),
    Case(
        "one plan and an unrelated example object",
        f'Tasks will call write_file like {{"path": "a.txt", "content": "hi"}}.\n{ONE}',
        Accept(ONE_EXPECTED),
    ),
    Case(
        "prose mentioning an empty array",
        f"Tasks that need nothing first get [] as dependencies.\n{ONE}",
        Accept(ONE_EXPECTED),
    ),
    Case(
        "prose with an example array of objects",
        f'The edits will look like [{{"path": "a.py", "line": 3}}].\n{ONE}',
        Accept(ONE_EXPECTED),
    ),
    Case(
        "a reasoning block before the plan",
        "<think>The user wants {a flag. Let me see [what to do</think>\n" + ONE,
        Accept(ONE_EXPECTED),
    ),
    Case("the same plan repeated", f"{ONE}\n\nAgain, the final plan:\n{ONE}", Accept(ONE_EXPECTED)),
    Case(
        "exactly max_tasks tasks",
        CHAIN_OF,
        Accept([(f"t{i}", "ANALYSIS", [f"t{i - 1}"] if i else []) for i in range(50)]),
    ),
    Case("long prose around a plan", LONG_PROSE + ONE + LONG_PROSE, Accept(ONE_EXPECTED)),
    Case("a very long description", plan_json(task("a", "y" * 100_000)), Accept([("a", "ANALYSIS", [])])),
    # ---- rejected: cut off ------------------------------------------------------------------------
    Case("length with complete json", THREE, Reject("cut off at the token limit"), finish_reason="length"),
    Case("length with truncated json", THREE[:120], Reject("cut off at the token limit"), finish_reason="length"),
    Case("length with empty text", "", Reject("cut off at the token limit"), finish_reason="length"),
    Case("stop but object unterminated", TRUNCATE_ME[: TRUNCATE_ME.rindex("}")], Reject("unterminated")),
    Case("stop but cut after a complete task", TRUNCATE_ME[: TRUNCATE_ME.index("task_3") - 20], Reject("unterminated")),
    Case("stop but cut inside a string", TRUNCATE_ME[: TRUNCATE_ME.index("Summarize") + 4], Reject("unterminated")),
    Case("cut inside an unclosed fence", "```json\n" + THREE[:200], Reject("unterminated")),
    Case("bare array cut off", json.dumps([task("a", "x"), task("b", "y")])[:-1], Reject("unterminated")),
    Case("unterminated block comment", '{"tasks": [{"id": "a", "description": "x"}] /* more', Reject("unterminated")),
    Case("complete plan then a second one cut off", f"{ONE}\nBetter:\n{THREE[:90]}", Reject("unterminated")),
    # ---- rejected: no usable JSON -----------------------------------------------------------------
    Case("empty reply", "", Reject("the reply was empty")),
    Case("whitespace only", " \n\t ", Reject("the reply was empty")),
    Case("prose only", "I would start by reading the README and then run the tests.", Reject("contains no JSON")),
    Case("markdown list", "1. Read the file\n2. Edit it\n3. Test", Reject("contains no JSON")),
    Case("json without tasks", '{"summary": "nothing to do"}', Reject('no "tasks" array')),
    Case("array of strings", '["read the file", "edit it"]', Reject('no "tasks" array')),
    Case("a single task object", json.dumps(task("a", "x")), Reject('no "tasks" array')),
    Case("two different plans", f"{ONE}\nOr alternatively:\n{OTHER}", Reject("2 different JSON plans")),
    Case(
        "a plan and a different bare array",
        f"{ONE}\n" + json.dumps([task("z", "other")]),
        Reject("2 different JSON plans"),
    ),
    Case("two fenced plans", f"```json\n{ONE}\n```\n```json\n{OTHER}\n```", Reject("2 different JSON plans")),
    # ---- rejected: invalid content ----------------------------------------------------------------
    Case("empty task list", '{"summary": "s", "tasks": []}', Reject("the plan has no tasks")),
    Case("empty bare array", "[]", Reject("the plan has no tasks")),
    Case("tasks is a string", '{"tasks": "read the file then edit it"}', Reject('"tasks" must be an array')),
    Case("task item is a string", '{"tasks": ["read the file"]}', Reject("task #1 is a string, not a JSON object")),
    Case("missing id", plan_json(task("a", "x"), {"description": "y"}), Reject('task #2 has no "id"')),
    Case("blank id", plan_json(task("  ", "x")), Reject('task #1 has a blank "id"')),
    Case(
        "boolean id",
        plan_json(task(True, "x")),
        Reject('task #1 has an invalid "id" (true); use a string like "task_1"'),
    ),
    Case("duplicate ids", plan_json(task("a", "x"), task("a", "y")), Reject('task id "a" is used by 2 tasks')),
    Case("empty description", plan_json(task("a", "")), Reject('task "a" has an empty "description"')),
    Case(
        "no description at all",
        plan_json({"id": "a", "type": "COMMAND"}),
        Reject('task "a" has an empty "description"'),
    ),
    Case(
        "unknown dependency",
        plan_json(task("a", "x"), task("b", "y", deps=["task_9"])),
        Reject('task "b" depends on "task_9", which is not a task'),
    ),
    Case(
        "dependency on an id that is not among the completed ones",
        plan_json(task("task_5", "x", deps=["task_3"])),
        Reject('depends on "task_3", which is neither a task of this plan nor a completed task'),
        external_ids=frozenset({"task_1"}),
    ),
    Case("self dependency", plan_json(task("a", "x", deps=["a"])), Reject('task "a" depends on itself')),
    Case(
        "two-task cycle",
        plan_json(
            task("task_1", "x"), task("task_2", "y", deps=["task_1", "task_4"]), task("task_4", "z", deps=["task_2"])
        ),
        Reject("the dependencies form a cycle: task_2 → task_4 → task_2"),
    ),
    Case(
        "three-task cycle",
        plan_json(task("a", "x", deps=["c"]), task("b", "y", deps=["a"]), task("c", "z", deps=["b"])),
        Reject("the dependencies form a cycle: a → c → b → a"),
    ),
    Case(
        "cycle among numeric ids",
        plan_json({"id": 1, "description": "x", "deps": [2]}, {"id": 2, "description": "y", "deps": [1]}),
        Reject("cycle: 1 → 2 → 1"),
    ),
    Case(
        "dependencies that are not ids",
        plan_json(task("a", "x"), {"id": "b", "description": "y", "dependencies": [["a"]]}),
        Reject('task "b" has "dependencies" that are not a list of task ids'),
    ),
    Case(
        "several problems reported together",
        plan_json(task("a", ""), task("b", "y", deps=["zz"]), task("b", "y")),
        Reject('own id; task "a" has an empty "description"; task "b" depends on "zz", which is not a task'),
    ),
    Case("one task over the limit", TOO_MANY, Reject("the plan has 51 tasks, more than the limit of 50")),
    Case("huge plan", HUGE, Reject("the plan has 500 tasks, more than the limit of 50")),
    Case("small custom limit", THREE, Reject("more than the limit of 2"), max_tasks=2),
]
