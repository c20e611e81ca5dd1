"""The top-level symbols of one source file, read with tree-sitter: classes, functions, types, and the
methods directly inside a class, each with its signature (the text before its body, on one line).

Python, JavaScript, TypeScript (and TSX), Go, Rust, Java, C and C++, from the grammar wheels. A file of
another language has no symbols (its words still count for ranking). Never raises on content: invalid
UTF-8 is decoded with replacement, and tree-sitter returns a tree (with error nodes) for any input.
What is too large, minified or binary is decided before parsing (`readable_source`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_SOURCE_BYTES = 1 << 20  # larger files are listed but not read
MINIFIED_LINE = 1_000  # a file whose lines average more than this is minified or generated
SIGNATURE_CHARS = 160
MAX_SYMBOLS = 400  # per file

# file suffix → (grammar module, its language function)
GRAMMARS: dict[str, tuple[str, str]] = {
    ".py": ("tree_sitter_python", "language"),
    ".pyi": ("tree_sitter_python", "language"),
    ".js": ("tree_sitter_javascript", "language"),
    ".jsx": ("tree_sitter_javascript", "language"),
    ".mjs": ("tree_sitter_javascript", "language"),
    ".cjs": ("tree_sitter_javascript", "language"),
    ".ts": ("tree_sitter_typescript", "language_typescript"),
    ".mts": ("tree_sitter_typescript", "language_typescript"),
    ".tsx": ("tree_sitter_typescript", "language_tsx"),
    ".go": ("tree_sitter_go", "language"),
    ".rs": ("tree_sitter_rust", "language"),
    ".java": ("tree_sitter_java", "language"),
    ".c": ("tree_sitter_c", "language"),
    ".h": ("tree_sitter_cpp", "language"),  # C headers parse as C++ well enough, C++ headers need it
    ".cc": ("tree_sitter_cpp", "language"),
    ".cpp": ("tree_sitter_cpp", "language"),
    ".cxx": ("tree_sitter_cpp", "language"),
    ".hh": ("tree_sitter_cpp", "language"),
    ".hpp": ("tree_sitter_cpp", "language"),
}

# Definitions, by node type, with the kind shown for them.
DEFINITIONS: dict[str, str] = {
    "function_definition": "def",
    "function_declaration": "func",
    "generator_function_declaration": "func",
    "method_declaration": "func",
    "function_item": "fn",
    "function_signature_item": "fn",
    "class_definition": "class",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "class_specifier": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "record",
    "type_alias_declaration": "type",
    "type_spec": "type",
    "struct_item": "struct",
    "enum_item": "enum",
    "trait_item": "trait",
    "impl_item": "impl",
    "mod_item": "mod",
    "struct_specifier": "struct",
    "enum_specifier": "enum",
    "type_definition": "type",
    "namespace_definition": "namespace",
    "method_definition": "method",
    "constructor_declaration": "func",
    "variable_declarator": "const",
}
# Nodes whose children are looked at as if they stood at the top.
WRAPPERS = frozenset(
    {
        "decorated_definition",
        "export_statement",
        "template_declaration",
        "linkage_specification",
        "type_declaration",
        "lexical_declaration",
        "declaration_list",
        "ambient_declaration",
    }
)
# Definitions whose own members (one level down) are listed too.
CONTAINERS = frozenset(
    {
        "class_definition",
        "class_declaration",
        "abstract_class_declaration",
        "class_specifier",
        "struct_specifier",
        "interface_declaration",
        "impl_item",
        "trait_item",
        "namespace_definition",
        "mod_item",
        "enum_declaration",
        "record_declaration",
    }
)
BODY_TYPES = frozenset(
    {
        "block",
        "class_body",
        "declaration_list",
        "field_declaration_list",
        "interface_body",
        "enum_body",
        "statement_block",
        "compound_statement",
    }
)


@dataclass(frozen=True)
class Symbol:
    name: str
    kind: str
    line: int  # 1-based
    signature: str
    depth: int  # 0 at the top, 1 inside a class


def language_of(path: str) -> str | None:
    """The grammar module that reads `path`, None when paicli has none for it."""
    suffix = path[path.rfind(".") :].lower() if "." in path.rsplit("/", 1)[-1] else ""
    grammar = GRAMMARS.get(suffix)
    return f"{grammar[0]}:{grammar[1]}" if grammar else None


def readable_source(data: bytes) -> str | None:
    """`data` as text, or None when it is binary (a NUL byte), too large or minified (long lines)."""
    if len(data) > MAX_SOURCE_BYTES or b"\0" in data[:8192]:
        return None
    lines = data.count(b"\n") + 1
    if len(data) / lines > MINIFIED_LINE:
        return None
    return data.decode("utf-8", errors="replace")


def symbols_of(path: str, source: str) -> list[Symbol]:
    """The symbols of `source` read as the language of `path`; [] for a language paicli cannot read."""
    grammar = language_of(path)
    if grammar is None:
        return []
    parser = _parser(grammar)
    if parser is None:
        return []
    data = source.encode("utf-8", errors="replace")
    tree = parser.parse(data)
    found: list[Symbol] = []
    _collect(tree.root_node, data, 0, found)
    return found[:MAX_SYMBOLS]


@cache
def _parser(grammar: str) -> Parser | None:
    from tree_sitter import Language, Parser

    module_name, function = grammar.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError:  # a grammar wheel missing from a broken install: no symbols for that language
        return None
    return Parser(Language(getattr(module, function)()))


def _collect(node: Node, data: bytes, depth: int, found: list[Symbol]) -> None:
    for child in node.named_children:
        if len(found) >= MAX_SYMBOLS:
            return
        kind = DEFINITIONS.get(child.type)
        if child.type in WRAPPERS:
            _collect(child, data, depth, found)
        elif kind is not None:
            name = _name(child, data)
            if name:
                found.append(Symbol(name, kind, child.start_point[0] + 1, _signature(child, data), depth))
            if child.type in CONTAINERS and depth == 0:
                body = child.child_by_field_name("body") or _body(child)
                if body is not None:
                    _collect(body, data, 1, found)


def _body(node: Node) -> Node | None:
    return next((child for child in node.named_children if child.type in BODY_TYPES), None)


def _name(node: Node, data: bytes) -> str:
    named = node.child_by_field_name("type") if node.type == "impl_item" else node.child_by_field_name("name")
    if named is None:
        declarator = node.child_by_field_name("declarator")
        while declarator is not None and declarator.type not in ("identifier", "field_identifier", "type_identifier"):
            declarator = declarator.child_by_field_name("declarator") or declarator.child_by_field_name("name")
        named = declarator
    if named is None:
        return ""
    return data[named.start_byte : named.end_byte].decode("utf-8", errors="replace")


def _signature(node: Node, data: bytes) -> str:
    body = node.child_by_field_name("body") or _body(node)
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
    text = data[node.start_byte : min(end, node.start_byte + 4 * SIGNATURE_CHARS)].decode("utf-8", errors="replace")
    if node.type == "variable_declarator":
        text = text.split("=", 1)[0]
    text = " ".join(text.split()).rstrip("{:=; ").rstrip()
    return text if len(text) <= SIGNATURE_CHARS else text[: SIGNATURE_CHARS - 1] + "…"
