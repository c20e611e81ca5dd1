"""`parse_script`: one command line, read once with the tree-sitter bash grammar, as a `Script`.

Two places where the grammar and bash disagree are put right before the tree is used:
- bash splits words only on space, tab and newline; the grammar also on `\\r`, `\\f` and `\\v`, so
  `x\\r#; rm -rf /` would hide a command behind a comment bash never sees. Those three characters (and
  every character beyond U+FFFF, on which the grammar's scanner can crash) are swapped for private-use
  stand-ins before parsing and back in every text taken from the tree.
- bash removes backslash-newline before it reads words (`r\\<newline>m` is `rm`), except inside single
  quotes, comments and quoted here-documents; the grammar treats it as a blank. Where that matters
  (between two characters of code, or in an unquoted here-document body, whose end it can move), the
  pairs bash removes are removed and the text parsed again; if the second tree does not agree with
  the first about where they were, the command is unreadable.

Results are cached by text, so the hard denylist, the classifier and the rule matcher share one parse.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

from paicli.shell.build import Builder
from paicli.shell.keywords import misread_tokens
from paicli.shell.lexical import continuation_points
from paicli.shell.syntax import NESTED_TOO_DEEPLY, Script, Unreadable

MAX_NESTING = 12  # code inside backticks inside backticks ...: deeper than this is unreadable
# Past these a command line is unreadable (OPAQUE): classifying it stays fast and never recurses too deep.
MAX_BYTES = 4 << 20  # a here-document writing a large file stays well below
MAX_NODES = 20_000  # the grammar's nodes (a 40-line script with here-documents has about 2,000)
MAX_TREE_DEPTH = 120  # substitutions inside substitutions ... (each level is a few nodes deep)
MAX_STAGES = 256  # stages of one pipeline
_LANGUAGE = Language(tree_sitter_bash.language())
_NEEDS_STAND_IN = re.compile("[\v\f\r\U00010000-\U0010ffff]")
_PRIVATE_USE = range(0xE000, 0xF900)
_BLANKS = b" \t\n"
# Nodes whose text is read from their byte range, gaps between their children included.
_READ_BY_RANGE = {"heredoc_body", "string", "raw_string", "ansi_c_string", "translated_string", "comment"}
# Nodes that end at an unquoted newline for bash, unless an operator before it carries the line on.
_ONE_LINE = {
    "command",
    "declaration_command",
    "unset_command",
    "redirected_statement",
    "file_redirect",
    "pipeline",
    "list",
    "variable_assignments",
}
# Nodes that run code or expand a value; each must be read by the builder (`_unread_code`).
_RUNS_CODE = {
    "command_substitution",
    "process_substitution",
    "expansion",
    "simple_expansion",
    "arithmetic_expansion",
    "ansi_c_string",
    "translated_string",
}
_LINE_CONTINUING = {"|", "|&", "&&", "||"}
# Nodes a newline may be part of without ending a `[ ... ]` test (quoted, or code of their own).
_ONE_TOKEN = _READ_BY_RANGE | {"command_substitution", "process_substitution", "expansion", "arithmetic_expansion"}
# Where bash keeps a backslash-newline as it is.
_KEEPS_CONTINUATIONS = {"comment", "raw_string", "ansi_c_string"}


def parse_script(text: str) -> Script:
    """The command line as bash would read it. Never raises: what cannot be read is `Unreadable`."""
    return _parse_nested(text, 0)


@lru_cache(maxsize=512)
def _parse_nested(text: str, depth: int) -> Script:
    if depth > MAX_NESTING:
        return _unreadable(text, NESTED_TOO_DEEPLY)
    if "\x00" in text:
        return _unreadable(text, "it holds a NUL byte")
    stand_ins = _stand_ins(text)
    if stand_ins is None:
        return _unreadable(text, "it holds too many unusual characters to read")
    try:
        data = text.translate({ord(k): v for k, v in stand_ins.items()}).encode("utf-8")
    except UnicodeEncodeError:
        return _unreadable(text, "it is not valid UTF-8")
    back = {ord(v): k for k, v in stand_ins.items()}
    if len(data) > MAX_BYTES:
        return _unreadable(text, f"it is too long to check ({len(data):,} bytes; at most {MAX_BYTES:,})")
    tree = grammar_parse(data)
    if too_big := _too_big(tree.root_node):
        return _unreadable(text, too_big)
    joins = _joins(tree, data)
    problem = None
    if joins:
        data, points = _remove(data, joins)
        tree = grammar_parse(data)
        problem = _disagreement(tree, data, points)
    root = tree.root_node
    problem = problem or _uncovered(root, data) or _joined_lines(root, data) or misread_tokens(root, data)
    problem = problem or _one_line_tests(root, data)
    builder = Builder(data, lambda part: part.translate(back), lambda code: _parse_nested(code, depth + 1))
    script = builder.script(tree.root_node.named_children, text)
    extra = []
    problem = problem or _unread_code(tree.root_node, builder.taken)
    if problem:
        extra.append(Unreadable(text, problem))
    if tree.root_node.has_error and not script.unreadable:
        extra.append(Unreadable(text, "it does not parse as bash"))
    if extra:
        script = Script(script.source, script.pipelines, (*script.unreadable, *extra))
    return script


def grammar_parse(data: bytes) -> Tree:
    """The one place the grammar runs (tests count the calls)."""
    return Parser(_LANGUAGE).parse(data)


def _uncovered(root: Node, data: bytes) -> str | None:
    """Text the grammar skipped without an error (it drops the `-` of `python3 - <<EOF`): bash reads it."""
    spans = [(point, point + 2) for point in continuation_points(data)]
    stack = [root]
    while stack:
        node = stack.pop()
        if node.child_count == 0 or node.type in _READ_BY_RANGE:
            spans.append((node.start_byte, node.end_byte))
        else:
            stack.extend(node.children)
    spans.sort()
    cursor = 0
    for start, end in [*spans, (len(data), len(data))]:
        if start > cursor and (gap := data[cursor:start].translate(None, _BLANKS)):
            index = data.index(gap[:1], cursor)
            return f"the grammar skips part of it ({data[index : index + 20].decode('utf-8', 'replace')!r})"
        cursor = max(cursor, end)
    return None


def _joined_lines(root: Node, data: bytes) -> str | None:
    """A newline the grammar read as a blank inside one command, pipeline or list, where bash ends the
    command (it only goes on after `|`, `&&` or `||`): `a | b | c` newline `rm -rf / && d` becomes
    `c rm -rf /` in the grammar's tree."""
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type not in _ONE_LINE:
            continue
        children = node.children
        for previous, child in itertools.pairwise(children):
            gap = data[previous.end_byte : child.start_byte].replace(b"\\\n", b"")
            if b"\n" in gap and not (previous.type in _LINE_CONTINUING and node.type in ("pipeline", "list")):
                return "the grammar joins lines that bash runs as separate commands"
    return None


def _one_line_tests(root: Node, data: bytes) -> str | None:
    """`[ ... ]` is a simple command for bash, which a newline ends; the grammar reads the test on past it
    (`[` newline `-n x ]` runs `-n` as a command, then `x`)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type != "test_command" or not node.children or node.children[0].type != "[":
            stack.extend(node.children)
            continue
        tokens: list[Node] = []
        inside = [node]
        while inside:
            part = inside.pop()
            if part.child_count == 0 or part.type in _ONE_TOKEN:
                tokens.append(part)
            else:
                inside.extend(part.children)
        tokens.sort(key=lambda t: t.start_byte)
        for previous, token in itertools.pairwise(tokens):
            if b"\n" in data[previous.end_byte : token.start_byte].replace(b"\\\n", b""):
                return "the grammar reads a `[` test on past the end of its line"
        stack.extend(c for t in tokens for c in t.children)  # substitutions hold tests of their own
    return None


def _too_big(root: Node) -> str | None:
    """Bounds what reading the tree costs (and how deep the builder recurses): past them, OPAQUE."""
    if root.descendant_count > MAX_NODES:
        return f"it is too long to check ({root.descendant_count:,} parts; at most {MAX_NODES:,})"
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            return NESTED_TOO_DEEPLY
        if node.type == "pipeline" and node.named_child_count > MAX_STAGES:
            return f"its pipeline is too long to check ({node.named_child_count:,} stages; at most {MAX_STAGES})"
        stack.extend((child, depth + 1) for child in node.children)
    return None


def _unread_code(root: Node, taken: set[int]) -> str | None:
    """Fail closed by construction: a substitution or expansion the grammar found and the builder never read
    (a node kind in a place it does not expect) means paicli does not know what the line runs."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _RUNS_CODE and node.id not in taken:
            text = (node.text or b"").decode("utf-8", "replace")[:40]
            return f"paicli did not read the {node.type.replace('_', ' ')} {text!r}"
        stack.extend(node.children)
    return None


def _stand_ins(text: str) -> dict[str, str] | None:
    """Private-use stand-ins for the characters the grammar must not see: `\\r`, `\\f`, `\\v` (it splits words
    on them, bash does not) and characters outside the Basic Multilingual Plane (a `{` followed by one
    crashes the grammar's scanner: tree-sitter-bash issue 337). None when there are not enough free ones."""
    needed = sorted(set(_NEEDS_STAND_IN.findall(text)))
    if not needed:
        return {}
    used = set(text)
    free = (chr(cp) for cp in _PRIVATE_USE if chr(cp) not in used)
    stand_ins = {}
    for char in needed:
        stand_in = next(free, None)
        if stand_in is None:
            return None
        stand_ins[char] = stand_in
    return stand_ins


def _unreadable(text: str, reason: str) -> Script:
    return Script(text, (), (Unreadable(text, reason),))


def _joins(tree: Tree, data: bytes) -> list[int]:
    """The backslash-newlines that bash removes and whose removal changes what the grammar reads."""
    joins = []
    matters = False
    for point in continuation_points(data):
        place = _place(tree.root_node, point)
        if place == "keeps":
            continue
        joins.append(point)
        if place == "heredoc":
            matters = True
        elif place == "gap":
            before = data[point - 1 : point] if point else b" "
            after = data[point + 2 : point + 3] or b" "
            matters = matters or (before[0] not in _BLANKS and after[0] not in _BLANKS)
    return joins if matters else []


def _place(root: Node, point: int) -> str:
    """Where a backslash-newline at `point` sits: `keeps` (bash leaves it), `heredoc` (an unquoted body),
    `text` (a word or double-quoted string: quote removal drops it) or `gap` (between tokens)."""
    node: Node | None = root.descendant_for_byte_range(point, point + 2)
    innermost = node
    while node is not None:
        if node.type in _KEEPS_CONTINUATIONS:
            return "keeps"
        if node.type == "heredoc_body":
            return "heredoc" if _heredoc_expands(node) else "keeps"
        node = node.parent
    if innermost is not None and innermost.child_count == 0 and innermost.start_byte <= point < innermost.end_byte:
        return "text"
    if innermost is not None and innermost.type in ("string", "string_content", "concatenation", "word"):
        return "text"
    return "gap"


def _heredoc_expands(body: Node) -> bool:
    redirect = body.parent
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None) if redirect else None
    return start is not None and not any(c in (start.text or b"") for c in b"'\"\\")


def _remove(data: bytes, joins: list[int]) -> tuple[bytes, list[int]]:
    """`data` without the backslash-newlines at `joins`, and where each one was in the new text."""
    out = bytearray()
    points = []
    cursor = 0
    for point in joins:
        out += data[cursor:point]
        points.append(len(out))
        cursor = point + 2
    out += data[cursor:]
    return bytes(out), points


def _disagreement(tree: Tree, data: bytes, points: list[int]) -> str | None:
    """Why the re-parsed tree contradicts the joins made for it, or None."""
    for point in points:
        if point and _place(tree.root_node, point - 1) == "keeps":
            return "its line continuations cannot be placed the way bash reads them"
    if _joins(tree, data):
        return "its line continuations cannot be placed the way bash reads them"
    return None
