"""grep_code gives the same results whichever engine chooses the files: rg from PATH or the search in
process. Both run on one corpus (Unicode, CRLF, a BOM, binary and empty files, a NUL after rg's first
buffer, files larger than that buffer, names starting with `-` or holding a line break, lines without a
final newline, more matching lines than are kept) for patterns that exercise where RE2 and Rust's regex
could differ."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from paicli.tools.file_kinds import select
from paicli.tools.file_lister import list_files
from paicli.tools.git_env import program_outside
from paicli.tools.grep_search import search
from paicli.tools.regex_syntax import compile_pattern, for_ripgrep

RG = shutil.which("rg")
needs_rg = pytest.mark.skipif(RG is None, reason="rg is not on PATH: only the in-process engine can run here")

CORPUS: dict[str, bytes] = {
    "src/app.py": b"import os\n\ndef handler_test(event):\n    return os.getcwd()  # TODO\n",
    "src/util.py": b"def helper():\n    x = 123 + 4567\n\tpass\n",
    "src/unicode.txt": "café été naïve\nÉTÉ en FRANCE\nstraße ΣΊΣΥΦΟΣ\nword_with_ünïcode\n".encode(),
    "src/crlf.txt": b"first line\r\nsecond line\r\nend$\r\n",
    "src/bom.txt": b"\xef\xbb\xbfstart here\nthen more\n",
    "src/no-newline.txt": b"alpha\nbeta\ngamma",
    "src/empty.txt": b"",
    "src/blank.txt": b"\n\n\nx\n\n",
    "-dash.txt": b"dash file handler\n",
    "with space.md": b"a.b literal and a-b and a+b\nuser@example.com\n",
    "bin/blob.dat": b"handler\x00\x01\x02binary",
    "bin/late-nul.dat": b"handler text\n" + b"y" * 9000 + b"\x00",
    "docs/long.md": b"word " * 2000 + b"needle\n",
    ".hidden/conf": b"handler = yes\nTODO: hidden\n",
    "tests/test_x.py": b"def test_handler():\n    assert handler_test(1)\n",
    "big/text.md": b"handler first\n" + b"filler line of text 123\n" * 3000 + b"handler last\n",
    "big/late-nul.dat": b"handler early\n" + b"z" * 200_000 + b"\nno match here\x00\n",
    "big/nul-then-match.dat": b"handler before\n" + b"q" * 100_000 + b"\x00\nhandler after\n",
    "big/long-line.md": b"x" * 150_000 + b" handler in a long line\r\nhandler next\r\n" + b"1234 end\n" * 9000,
    "many.txt": b"handler x\n" * 30 + b"end 123\n",
    "odd\nname.txt": b"handler in an odd name\n",
    # rg's note that a file is binary, mimicked by a file name and by a line
    "notes/a": b"handler in a plain file\n",
    "notes/a: binary file matches (x": b"handler\x00",
    "notes/fake.txt": b"./notes/fake.txt: binary file matches (handler\n",
    "12:34.txt": b"handler 12:34\n",
}
PATTERNS = [
    "handler",
    r"\w+_test",
    r"^\w+$",
    "(?i)HANDLER",
    r"^\s*def ",
    r"\bos\b",
    r"[^a-z ]$",
    "é",
    r"\d{3}",
    r"\Qa.b\E",
    r"[\w-]+@",
    r"\W\w",
    r"\D\d",
    r"\S+\s+\S+",
    "^$",
    ".",
    "x*",
    "(?i)été",
    r"\pL+ing",
    r"\p{Greek}+",
    "[[:upper:]]{2}",
    "TODO|FIXME",
    r"line$",
    r"^start",
    "(a|aa)+$",
    r"\$",
    "[]a]",
    "[^]a]x",
    "a&&b|a~~b|a--b",
    r"\x{e9}",
    r"\Bandl",
]


@pytest.fixture
def corpus(workspace: Path) -> Path:
    for name, data in CORPUS.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (workspace / "link.py").symlink_to("src/app.py")
    return workspace


@needs_rg
@pytest.mark.parametrize("pattern", PATTERNS)
async def test_rg_and_the_in_process_search_give_the_same_hits(corpus: Path, pattern: str) -> None:
    compiled = compile_pattern(pattern)
    chosen = select(corpus, list_files(corpus).files)
    by_rg, engine = await search(corpus, chosen, compiled, 20, RG)
    in_process, fallback = await search(corpus, chosen, compiled, 20, None)
    assert fallback == "re2"
    assert engine == "rg", f"rg refused {for_ripgrep(pattern)!r}"  # parity is shown only when rg really ran
    assert by_rg == in_process


@needs_rg
async def test_rg_reports_the_lines_itself_and_drops_what_it_calls_binary(corpus: Path) -> None:
    from paicli.tools.grep_search import ripgrep_hits

    assert RG is not None
    files = [path for path in select(corpus, list_files(corpus).files).regular if "\n" not in path]
    found = await ripgrep_hits(RG, corpus, "handler", files, 20)
    assert found is not None
    assert set(found) == {
        "src/app.py",
        "-dash.txt",
        ".hidden/conf",
        "tests/test_x.py",
        "many.txt",
        "big/text.md",
        "big/long-line.md",
        "notes/a",
        "notes/fake.txt",
        "12:34.txt",
    }
    assert found["tests/test_x.py"].lines == [(1, "def test_handler():"), (2, "    assert handler_test(1)")]
    assert found["many.txt"].count == 30 and len(found["many.txt"].lines) == 20


async def test_a_pattern_rg_refuses_is_searched_in_process(corpus: Path, tmp_path: Path) -> None:
    fake_rg = tmp_path / "bin" / "rg"
    fake_rg.parent.mkdir()
    fake_rg.write_text("#!/bin/sh\necho 'regex parse error' >&2\nexit 2\n")
    fake_rg.chmod(0o755)
    chosen = select(corpus, list_files(corpus).files)
    hits, engine = await search(corpus, chosen, compile_pattern("handler"), 20, str(fake_rg))
    assert engine == "re2"
    assert hits == (await search(corpus, chosen, compile_pattern("handler"), 20, None))[0]
    assert [hit.path for hit in hits] == [
        "-dash.txt",
        ".hidden/conf",
        "12:34.txt",
        "big/long-line.md",
        "big/text.md",
        "link.py",
        "many.txt",
        "notes/a",
        "notes/fake.txt",
        "odd\nname.txt",
        "src/app.py",
        "tests/test_x.py",
    ]


OTHER_FORMS = [b"./src/app.py\x001:handler\n./src/app.py\x002:handler\n", b"./src/app.py\x00\n1:handler\n"]


@pytest.mark.parametrize("form", OTHER_FORMS)
async def test_rg_output_in_another_form_is_searched_in_process(corpus: Path, tmp_path: Path, form: bytes) -> None:
    (tmp_path / "output").write_bytes(form)
    fake_rg = tmp_path / "bin" / "rg"
    fake_rg.parent.mkdir()
    fake_rg.write_text(f"#!/bin/sh\ncat '{tmp_path / 'output'}'\n")
    fake_rg.chmod(0o755)
    chosen = select(corpus, list_files(corpus).files)
    hits, engine = await search(corpus, chosen, compile_pattern("handler"), 20, str(fake_rg))
    assert engine == "re2"
    assert hits == (await search(corpus, chosen, compile_pattern("handler"), 20, None))[0]


def test_rg_is_looked_for_outside_the_workspace_only(workspace: Path) -> None:
    planted = workspace / "bin" / "rg"
    planted.parent.mkdir()
    planted.write_text("#!/bin/sh\ntouch ran\n")
    planted.chmod(0o755)
    found = program_outside("rg", workspace, f"{planted.parent}:/nonexistent")
    assert found is None


def test_a_large_file_is_text_when_it_holds_no_nul_byte_and_is_still_there(corpus: Path, tmp_path: Path) -> None:
    import threading

    from paicli.tools.grep_search import text_files

    (tmp_path / "outside.md").write_bytes(b"handler\n" * 10_000)
    (corpus / "out.md").symlink_to(tmp_path / "outside.md")
    paths = ["big/late-nul.dat", "big/long-line.md", "big/nul-then-match.dat", "big/text.md", "gone.md", "out.md"]
    assert text_files(corpus, paths, threading.Event()) == {"big/long-line.md", "big/text.md"}
    cancelled = threading.Event()
    cancelled.set()
    assert text_files(corpus, paths, cancelled) == set()
