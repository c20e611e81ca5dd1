"""Compound commands from the grammar's nodes: groups, subshells, `if`, loops, `case`, functions, tests.

`CompoundReader` turns one compound statement into a `Compound` holding the scripts of its bodies. It
calls back into the statement builder for those scripts and reports what it cannot read; `[[ ... ]]` and
`[ ... ]` operands are words, and the operators that evaluate them as code or names make the test
unreadable.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from tree_sitter import Node

from paicli.shell.syntax import Compound, Kind, Script, Word
from paicli.shell.words import WORD_KINDS, WordReader

STATEMENT_KINDS = {
    "command",
    "redirected_statement",
    "pipeline",
    "list",
    "negated_command",
    "subshell",
    "compound_statement",
    "if_statement",
    "while_statement",
    "for_statement",
    "c_style_for_statement",
    "case_statement",
    "function_definition",
    "test_command",
    "declaration_command",
    "unset_command",
    "variable_assignment",
    "variable_assignments",
}
_CLAUSE_KINDS = {"do_group", "elif_clause", "else_clause", "case_item"}
_ARITHMETIC_TESTS = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"}
_NAME_TESTS = {"-v", "-R"}
_TEST_EXPRESSIONS = {"binary_expression", "unary_expression", "parenthesized_expression"}


class Host(Protocol):
    """What the compound reader needs from the statement builder."""

    words: WordReader

    def text(self, node: Node) -> str: ...

    def unreadable(self, source: str, reason: str) -> None: ...

    def script(self, nodes: list[Node], source: str) -> Script: ...


class CompoundReader:
    def __init__(self, host: Host) -> None:
        self.host = host

    def compound(self, node: Node) -> Compound:
        kind = node.type
        source = self.host.text(node)
        if kind == "test_command":
            return self._test(node)
        if kind == "compound_statement" and node.children and node.children[0].type == "((":
            return Compound(source, Kind.ARITHMETIC, arithmetic=(self.host.words.arithmetic(node),))
        if kind == "c_style_for_statement":
            body = node.child_by_field_name("body")
            heads = [c for c in node.named_children if c != body]
            arithmetic = tuple(self.host.words.arithmetic(c) for c in heads)
            return Compound(source, Kind.FOR, self._bodies([body] if body else []), arithmetic=arithmetic)
        if kind == "function_definition":
            function = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            named = self.host.text(function) if function else None
            return Compound(source, Kind.FUNCTION, self._bodies([body] if body else []), name=named)
        if kind == "for_statement":
            variable = node.child_by_field_name("variable")
            values = tuple(self.host.words.word(c) for c in node.children_by_field_name("value"))
            body = node.child_by_field_name("body")
            name = self.host.text(variable) if variable else None
            return Compound(source, Kind.FOR, self._bodies([body] if body else []), values, name=name)
        if kind == "case_statement":
            return self._case(node)
        compound = {
            "subshell": Kind.SUBSHELL,
            "compound_statement": Kind.GROUP,
            "if_statement": Kind.IF,
            "while_statement": Kind.WHILE,
        }.get(kind)
        if compound is None:
            self.host.unreadable(source, f"paicli cannot read this part of the command ({kind})")
            return Compound(source, Kind.GROUP, (self.host.script(list(self._statements_below(node)), source),))
        return Compound(source, compound, (self.host.script(list(self._statements_below(node)), source),))

    def _bodies(self, nodes: list[Node]) -> tuple[Script, ...]:
        return tuple(self.host.script(list(self._statements_below(n)) or [n], self.host.text(n)) for n in nodes)

    def _statements_below(self, node: Node) -> Iterator[Node]:
        """The statements of a compound command, through its clauses (`do ... done`, `elif`, `else`, ...)."""
        for child in node.named_children:
            if child.type in _CLAUSE_KINDS:
                yield from self._statements_below(child)
            elif child.type in STATEMENT_KINDS or child.type in ("ERROR", "comment") or child.is_missing:
                yield child
            elif child.type not in WORD_KINDS:
                yield child  # unknown: statement() records it as unreadable

    def _case(self, node: Node) -> Compound:
        words = [self.host.words.word(c) for c in node.children_by_field_name("value")]
        scripts = []
        for item in node.named_children:
            if item.type != "case_item":
                continue
            words.extend(self.host.words.word(c) for c in item.children_by_field_name("value"))
            body = [c for c in item.named_children if c.type in STATEMENT_KINDS or c.type == "ERROR"]
            scripts.append(self.host.script(body, self.host.text(item)))
        return Compound(self.host.text(node), Kind.CASE, tuple(scripts), tuple(words))

    def _test(self, node: Node) -> Compound:
        """`[[ ... ]]` and `[ ... ]`: operands are words; some operators evaluate them as code. Anything else
        the grammar finds there (it reads `[` newline `cmd > f ]` as a test of a command) is unreadable, and
        the commands in it are kept for the denylist."""
        double = bool(node.children) and node.children[0].type == "[["
        words: list[Word] = []
        statements: list[Node] = []
        for expression in node.named_children:
            self._test_expression(expression, double, words, statements)
        scripts = (self.host.script(statements, self.host.text(node)),) if statements else ()
        return Compound(self.host.text(node), Kind.TEST, scripts, tuple(words))

    def _test_expression(self, node: Node, double: bool, words: list[Word], statements: list[Node]) -> None:
        if node.type in WORD_KINDS and node.type != "test_operator":
            words.append(self.host.words.word(node))
            return
        if node.type == "ERROR" or node.is_missing:
            self.host.unreadable(self.host.text(node), "a test does not parse")
        elif node.type not in _TEST_EXPRESSIONS and node.type != "test_operator":
            self.host.unreadable(self.host.text(node), f"paicli cannot read this part of a test ({node.type})")
            if node.type in STATEMENT_KINDS:
                statements.append(node)
                return
        operator = node.child_by_field_name("operator")
        op = self.host.text(operator) if operator is not None else ""
        operands = [c for c in node.named_children if c != operator]
        if op in _NAME_TESTS:
            for operand in operands:
                if not self.host.text(operand).isidentifier():
                    self.host.unreadable(
                        self.host.text(node), f"test {op} evaluates {self.host.text(operand)} as a variable name"
                    )
        if double and op in _ARITHMETIC_TESTS:
            for operand in operands:
                if operand.type != "number":
                    self.host.unreadable(self.host.text(node), f"[[ {op} ]] evaluates its operands as arithmetic")
        for operand in operands:
            self._test_expression(operand, double, words, statements)
