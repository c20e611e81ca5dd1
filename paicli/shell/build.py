"""From the grammar's tree to `paicli.shell.syntax`: statements, pipelines, commands (compound commands are
read by `paicli.shell.compounds`).

Anything the grammar could not read (ERROR and MISSING nodes) or that this module does not know is
recorded as `Unreadable` on the script it belongs to; the commands it can still make out of a broken
part are kept (the denylist looks at them, the classifier fails closed on the whole).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from tree_sitter import Node

from paicli.shell.compounds import STATEMENT_KINDS, CompoundReader
from paicli.shell.keywords import keyword_misread, read_as_assignment
from paicli.shell.lexical import heredoc_delimiter
from paicli.shell.syntax import (
    Assignment,
    Command,
    Compound,
    HereString,
    Input,
    Kind,
    Literal,
    Opaque,
    Part,
    Pipeline,
    Redirect,
    Script,
    SimpleCommand,
    Unreadable,
    Word,
)
from paicli.shell.words import WORD_KINDS, WordReader

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Builder:
    def __init__(self, data: bytes, decode: Callable[[str], str], subparse: Callable[[str], Script]) -> None:
        self.data = data
        self._decode = decode
        self._subparse = subparse
        self._unreadable: list[list[Unreadable]] = []
        self.words = WordReader(self)
        self.compounds = CompoundReader(self)
        self.taken: set[int] = set()  # ids of the nodes whose meaning was taken (see parse.py)

    # ---- what the word reader calls back ----

    def text(self, node: Node) -> str:
        return self.slice(node.start_byte, node.end_byte)

    def slice(self, start: int, end: int) -> str:
        return self._decode(self.data[start:end].decode("utf-8", "replace"))

    def unreadable(self, source: str, reason: str) -> None:
        self._unreadable[-1].append(Unreadable(source, reason))

    def read(self, node: Node) -> None:
        self.taken.add(node.id)

    def subparse(self, code: str) -> Script:
        return self._subparse(code)

    def statements_script(self, node: Node, start: int, end: int) -> Script:
        return self.script(node.named_children, self.slice(start, end))

    # ---- statements ----

    def script(self, nodes: list[Node], source: str) -> Script:
        self._unreadable.append([])
        pipelines = [p for node in nodes for p in self.statement(node)]
        return Script(source, tuple(pipelines), tuple(self._unreadable.pop()))

    def statement(self, node: Node) -> list[Pipeline]:
        kind = node.type
        if kind == "comment":
            return []
        if kind == "list":
            return [p for child in node.named_children for p in self.statement(child)]
        if kind == "pipeline":
            return [self._pipeline(node)]
        if kind == "negated_command":
            return [p for child in node.named_children for p in self.statement(child)]
        if kind == "redirected_statement":
            return self._redirected(node)
        if kind in ("command", "declaration_command", "unset_command"):
            lines = self._lines(node)
            if len(lines) > 1:
                self.unreadable(self.text(node), "the grammar joins lines that bash runs as separate commands")
            return [Pipeline((self._simple(node, children),)) for children in lines]
        if kind in ("variable_assignment", "variable_assignments"):
            assignments = [node] if kind == "variable_assignment" else node.named_children
            return [Pipeline((SimpleCommand(self.text(node), (), tuple(self._assignment(a) for a in assignments)),))]
        if kind in STATEMENT_KINDS:
            return [Pipeline((self.compounds.compound(node),))]
        if kind == "ERROR" or node.is_missing:
            self.unreadable(self.text(node), "it does not parse as bash")
            return self._salvage(node)
        self.unreadable(self.text(node), f"paicli cannot read this part of the command ({kind})")
        return self._salvage(node)

    def _salvage(self, node: Node) -> list[Pipeline]:
        """The commands still recognisable inside a part that does not parse."""
        found: list[Pipeline] = []
        for child in node.children:
            if child.type in STATEMENT_KINDS:
                found.extend(self.statement(child))
            elif child.type in ("command_substitution", "process_substitution"):
                script = self.script(child.named_children, self.text(child))
                found.append(Pipeline((Compound(self.text(child), Kind.GROUP, (script,)),)))
            else:
                found.extend(self._salvage(child))
        return found

    def _pipeline(self, node: Node) -> Pipeline:
        stages: list[Command] = []
        for child in node.named_children:
            if child.type == "comment":
                continue
            pipelines = self.statement(child)
            if len(pipelines) == 1:
                stages.extend(pipelines[0].commands)
            else:
                stages.append(Compound(self.text(child), Kind.GROUP, (Script(self.text(child), tuple(pipelines)),)))
        return Pipeline(tuple(stages))

    def _redirected(self, node: Node) -> list[Pipeline]:
        """A statement with redirections; a here-document's node also holds the rest of its line."""
        body = node.child_by_field_name("body")
        head: list[Pipeline] = self.statement(body) if body is not None else [Pipeline((SimpleCommand("", ()),))]
        redirects: list[Redirect] = []
        inputs: list[Input] = []
        stages: list[Command] = []
        after: list[Pipeline] = []
        for child in node.children_by_field_name("redirect"):
            if child.type == "heredoc_redirect":
                self._heredoc(child, redirects, inputs, stages, after)
            else:
                self._redirect(child, redirects, inputs)
        for child in node.named_children:
            if child.type in ("ERROR",) or child.is_missing:
                self.unreadable(self.text(child), "it does not parse as bash")
                after.extend(self._salvage(child))
        last = head[-1]
        target = last.commands[-1]
        attached = replace(target, redirects=(*target.redirects, *redirects), inputs=(*target.inputs, *inputs))
        head[-1] = Pipeline((*last.commands[:-1], attached, *stages))
        return [*head, *after]

    def _heredoc(
        self, node: Node, redirects: list[Redirect], inputs: list[Input], stages: list[Command], after: list[Pipeline]
    ) -> None:
        start = body = end = None
        strip_tabs = False
        operator: str | None = None
        for child in node.children:
            kind = child.type
            if kind in ("<<", "<<-"):
                strip_tabs = kind == "<<-"
            elif kind == "heredoc_start":
                start = child
            elif kind == "heredoc_body":
                body = child
            elif kind == "heredoc_end":
                end = child
            elif kind in ("file_redirect", "herestring_redirect"):
                self._redirect(child, redirects, inputs)
            elif kind == "pipeline":  # `cat <<EOF | sh`: the stages after the here-document's command
                for stage in child.named_children:
                    pipelines = self.statement(stage)
                    stages.extend(c for p in pipelines[:1] for c in p.commands)
                    after.extend(pipelines[1:])
            elif kind in ("&&", "||", ";", "&"):
                operator = kind
            elif kind in STATEMENT_KINDS and operator is not None:
                after.extend(self.statement(child))
            elif kind == "comment":
                continue
            else:
                self.unreadable(self.text(child), "a here-document's line does not parse as bash")
                after.extend(self.statement(child) if kind in STATEMENT_KINDS else self._salvage(child))
        if start is None:
            self.unreadable(self.text(node), "a here-document has no delimiter")
            return
        if problem := self._heredoc_bounds(start, body, end, strip_tabs):
            self.unreadable(self.text(node), problem)
        inputs.append(self.words.heredoc(start, body, strip_tabs))

    def _heredoc_bounds(self, start: Node, body: Node | None, end: Node | None, strip_tabs: bool) -> str | None:
        """Why the grammar's here-document does not end where bash ends it, or None. Bash ends the body at
        the first line that is exactly the delimiter (the grammar also at a line that starts with it)."""
        delimiter = heredoc_delimiter(self.text(start))
        lines: list[str] = []
        if body is not None:
            line_start = self.data.rfind(b"\n", 0, body.start_byte) + 1
            indent = self.data[line_start : body.start_byte]
            if not line_start or indent.strip(b"\t" if strip_tabs else b""):
                return "a here-document's body does not start on the next line"
            lines = self.text(body).split("\n")
            if lines and lines[-1] == "":
                lines.pop()
        if any((line.lstrip("\t") if strip_tabs else line) == delimiter for line in lines):
            return "a here-document ends earlier than the grammar reads it"
        if end is not None:
            line_start = self.data.rfind(b"\n", 0, end.start_byte) + 1
            line_end = self.data.find(b"\n", end.start_byte)
            line = self.slice(line_start, line_end if line_end >= 0 else len(self.data))
            if (line.lstrip("\t") if strip_tabs else line) != delimiter:
                return "a here-document ends on a line bash does not end it on"
        return None

    def _redirect(self, node: Node, redirects: list[Redirect], inputs: list[Input]) -> None:
        if node.type == "herestring_redirect":
            words = [c for c in node.named_children if c.type in WORD_KINDS]
            if len(words) != 1:
                self.unreadable(self.text(node), "a here-string does not parse")
                return
            inputs.append(HereString(self.words.word(words[0])))
            return
        if node.type != "file_redirect":
            self.unreadable(self.text(node), f"paicli cannot read this redirection ({node.type})")
            return
        fd = node.child_by_field_name("descriptor")
        operators = [c.type for c in node.children if not c.is_named]
        targets = node.children_by_field_name("destination")
        spelled = "".join(self.text(c) for c in node.children if c.type == "ERROR" or not c.is_named)
        if spelled == "<>" and len(targets) == 1:  # the grammar has no `<>` (open for reading and writing)
            operators = ["<>"]
        elif len(operators) != 1 or len(targets) > 1 or any(c.type == "ERROR" for c in node.children):
            self.unreadable(self.text(node), "a redirection does not parse")
            if not targets:
                return
        operator = operators[0] if operators else ">"
        target = self.words.word(targets[0]) if targets else None
        if target is None and not operator.endswith("-"):
            self.unreadable(self.text(node), "a redirection has no target")
        redirects.append(Redirect(operator, target, self.text(fd) if fd is not None else None))

    def _lines(self, node: Node) -> list[list[Node]]:
        """A command's children, split where a newline between two of them ends the command for bash (the
        grammar sometimes reads `a | b | c` newline `rm -rf / && d` as one command `c rm -rf /`)."""
        lines: list[list[Node]] = [[]]
        previous = node.start_byte
        for child in node.children:
            gap = self.data[previous : child.start_byte].replace(b"\\\n", b"")
            if b"\n" in gap and lines[-1]:
                lines.append([])
            lines[-1].append(child)
            previous = child.end_byte
        return lines

    def _simple(self, node: Node, children: list[Node] | None = None) -> SimpleCommand:
        words: list[Word] = []
        assignments: list[Assignment] = []
        redirects: list[Redirect] = []
        inputs: list[Input] = []
        for child in node.children if children is None else children:
            kind = child.type
            if kind == "variable_assignment" and node.type == "command":
                assignments.append(self._assignment(child))
            elif kind == "variable_assignment":  # `export A=1`: an argument of the builtin
                words.append(self._assignment_word(child))
            elif kind in ("file_redirect", "herestring_redirect"):
                self._redirect(child, redirects, inputs)
            elif kind == "command_name":
                words.extend(self.words.word(c) for c in child.named_children[:1])
            elif kind in WORD_KINDS:
                words.append(self.words.word(child))
            elif not child.is_named and node.type != "command":  # `declare`, `export`, `unset`, ...
                words.append(Word(self.text(child), (Literal(self.text(child), quoted=False),)))
            elif kind == "comment":
                continue
            elif child.is_named:
                source = self.text(child)
                self.unreadable(source, f"paicli cannot read this part of the command ({kind})")
                salvaged = Script(source, tuple(self._salvage(child)))
                words.append(Word(source, (Opaque(source, (salvaged,)),)))
        source = self.text(node) if children is None else self.slice(children[0].start_byte, children[-1].end_byte)
        if words and words[0].parts == (Literal("coproc", quoted=False),):
            self.unreadable(source, "the grammar does not know `coproc` (it reads `coproc NAME { ... }` apart)")
        elif problem := keyword_misread(words):
            self.unreadable(source, problem)
        elif node.type == "command" and words and read_as_assignment(words[0]):  # `_=1 ls`
            self.unreadable(source, f"bash reads {words[0].text} as an assignment, which the grammar does not")
        return SimpleCommand(source, tuple(words), tuple(assignments), tuple(redirects), tuple(inputs))

    def _assignment(self, node: Node) -> Assignment:
        name_node = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        name = self.text(name_node) if name_node is not None else ""
        subscript = None
        if name_node is not None and name_node.type == "subscript":
            index = name_node.child_by_field_name("index")
            subscript = self.words.word(index) if index is not None else None
            if index is None or index.type != "number":
                self.unreadable(self.text(node), "an array subscript is evaluated as arithmetic")
            base = name_node.child_by_field_name("name")
            name = self.text(base) if base is not None else name
        if not _IDENTIFIER.fullmatch(name):  # `--output=x cmd`, `1a=b`: a command (or argument) for bash
            self.unreadable(self.text(node), f"bash does not read {name}= as an assignment, which the grammar does")
        if value is None:
            return Assignment(name, None, subscript=subscript)
        if value.type == "array":
            elements = tuple(self.words.word(c) for c in value.named_children if c.type in WORD_KINDS)
            return Assignment(name, None, elements, subscript)
        if value.type not in WORD_KINDS:
            self.unreadable(self.text(node), f"paicli cannot read this assignment ({value.type})")
        return Assignment(name, self.words.word(value), subscript=subscript)

    def _assignment_word(self, node: Node) -> Word:
        """`A=1` as an argument of `export`/`declare`: one word, its substitutions kept."""
        assignment = self._assignment(node)
        parts: list[Part] = [Literal(self.text(node).split("=", 1)[0] + "=", quoted=False)]
        for word in assignment.words:
            parts.extend(word.parts)
        return Word(self.text(node), tuple(parts))
