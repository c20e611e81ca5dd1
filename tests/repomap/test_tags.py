"""Top-level symbols per language, and what is never parsed."""

from __future__ import annotations

import pytest

from paicli.repomap.tags import MAX_SOURCE_BYTES, readable_source, symbols_of

SOURCES = {
    "a.py": "@dec\ndef load(path: str) -> bytes:\n    pass\nclass Store(Base):\n    def put(self): pass\n",
    "a.js": "export function load(p) {}\nclass Store { put() {} }\n",
    "a.ts": "export interface Store { a: number }\nexport function load(p: string): number { return 1 }\n",
    "a.go": "package x\nfunc Load(p string) int { return 1 }\ntype Store struct{}\n",
    "a.rs": "pub fn load(p: &str) -> i32 { 1 }\npub struct Store;\nimpl Store { fn put(&self) {} }\n",
    "A.java": "public class Store { public int put(int x) { return x; } }\n",
    "a.c": "static int load(const char *p) { return 1; }\nstruct Store { int x; };\n",
    "a.cpp": "namespace db { class Store { void put(); }; int load(int a) { return a; } }\n",
}
EXPECTED = {
    "a.py": "class Store(Base)",
    "a.js": "class Store",
    "a.ts": "function load(p: string): number",
    "a.go": "func Load(p string) int",
    "a.rs": "pub fn load(p: &str) -> i32",
    "A.java": "public int put(int x)",
    "a.c": "static int load(const char *p)",
    "a.cpp": "class Store",
}


@pytest.mark.parametrize("path", sorted(SOURCES))
def test_each_language_gives_its_definitions_with_signatures(path: str) -> None:
    symbols = symbols_of(path, SOURCES[path])
    assert EXPECTED[path] in [symbol.signature for symbol in symbols]
    assert {"Store"} <= {symbol.name for symbol in symbols}


def test_a_method_sits_one_level_down() -> None:
    symbols = symbols_of("a.py", SOURCES["a.py"])
    assert [(s.name, s.depth) for s in symbols] == [("load", 0), ("Store", 0), ("put", 1)]


def test_unparsable_source_and_unknown_languages_give_no_error() -> None:
    assert symbols_of("broken.py", "def (((\n class ::: \x00") == []
    assert symbols_of("notes.txt", "def f(): pass") == []
    assert symbols_of("Makefile", "all:\n\techo") == []


def test_invalid_utf8_is_read_with_replacement() -> None:
    text = readable_source(b"def caf\xe9(x):\n    return x\n\xff\xfe\n")
    assert text is not None
    assert [s.name[:3] for s in symbols_of("a.py", text)] == ["caf"]


def test_binary_large_and_minified_files_are_not_read() -> None:
    assert readable_source(b"\x7fELF\0\0\0binary") is None
    assert readable_source(b"x = 1\n" * (MAX_SOURCE_BYTES // 6 + 1)) is None
    assert readable_source(b"var a=1;" * 2_000) is None  # one 16 kB line
    assert readable_source(b"ordinary = 1\n") == "ordinary = 1\n"
