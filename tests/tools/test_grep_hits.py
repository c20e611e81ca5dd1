"""rg's output read as it comes: whatever pieces it arrives in (a byte at a time, a group cut anywhere,
the empty line between two groups cut in two), the hits are those of the whole output read at once; rg's
notes that a file is binary drop that file and no other, whatever the file names look like."""

from __future__ import annotations

import random

from paicli.tools.grep_hits import FileHits, RgOutput, parse_rg_output

OUTPUT = (
    b'./lead.bin: binary file matches (found "\\0" byte around offset 3)\n'  # notes first: files without records
    b'./lead2.bin: binary file matches (found "\\0" byte around offset 3)\n\n'
    b"./a.py\x001:def handler(): pass\n"
    b"3:handler = 1\n\n"
    b"./big.dat\x001:handler early\n"
    b"2:handler too\n"
    b'./big.dat: binary file matches (found "\\0" byte around offset 200028)\n\n'  # its own note: dropped
    + b"./many.py\x00"
    + b"".join(b"%d:handler %d\n" % (n, n) for n in range(1, 60))
    + b'./e.py: binary file matches (found "\\0" byte around offset 9)\n\n'  # another file's note, no line before
    b"./a\x004:./a: binary file matches (handler\n"  # a line like a note: no record starts with "./"
    b'./a: binary file matches (x: binary file matches (found "\\0" byte around offset 9)\n\n'  # not a's
    b"./caf\xc3\xa9.py\x0012:handler \xff\xfe caf\xc3\xa9\n\n"
    b"./1:2\x001:handler\n\n"
    b"./sub/b.py\x007:x = handler  # a:b:c\n"
    b"9:\n"
)


def test_the_whole_output_gives_each_files_count_and_first_lines() -> None:
    hits = parse_rg_output([OUTPUT], 20)
    assert sorted(hits) == ["1:2", "a", "a.py", "café.py", "many.py", "sub/b.py"]  # the binary ones dropped
    assert hits["a.py"] == FileHits("a.py", 2, [(1, "def handler(): pass"), (3, "handler = 1")])
    assert hits["many.py"].count == 59 and len(hits["many.py"].lines) == 20
    assert hits["many.py"].lines[-1] == (20, "handler 20")
    assert hits["a"] == FileHits("a", 1, [(4, "./a: binary file matches (handler")])
    assert hits["1:2"].lines == [(1, "handler")]
    assert hits["sub/b.py"].lines == [(7, "x = handler  # a:b:c"), (9, "")]
    assert hits["café.py"].lines == [(12, "handler \ufffd\ufffd café")]


def test_any_pieces_give_the_same_hits() -> None:
    whole = parse_rg_output([OUTPUT], 20)
    rng = random.Random(40)
    for size in [1, 2, 7, 64, len(OUTPUT)]:
        parsed = RgOutput(20)
        for start in range(0, len(OUTPUT), size):
            parsed.feed(OUTPUT[start : start + size])
        parsed.end()
        assert parsed.hits() == whole, size
    for _ in range(200):
        cuts = sorted(rng.sample(range(1, len(OUTPUT)), rng.randint(1, 30)))
        parsed = RgOutput(20)
        for start, stop in zip([0, *cuts], [*cuts, len(OUTPUT)], strict=True):
            parsed.feed(OUTPUT[start:stop])
        parsed.end()
        assert parsed.hits() == whole


def test_an_output_without_a_final_line_break_keeps_its_last_record() -> None:
    parsed = RgOutput(20)
    parsed.feed(b"./a.py\x001:handler")
    parsed.end()
    assert parsed.hits() == {"a.py": FileHits("a.py", 1, [(1, "handler")])}


def test_a_file_named_twice_is_counted_once_with_its_first_lines() -> None:
    hits = parse_rg_output([b"./a.py\x001:one\n2:two\n", b"./a.py\x005:five\n"], 2)
    assert hits == {"a.py": FileHits("a.py", 3, [(1, "one"), (2, "two")])}


def test_lines_are_decoded_only_when_read() -> None:
    hits = parse_rg_output([b"./a.py\x001:one\n2:tw\xffo\n"], 20)["a.py"]
    assert hits._lines is None
    assert hits.lines == [(1, "one"), (2, "tw\ufffdo")] and hits._lines is not None


def test_output_in_another_form_is_not_read() -> None:
    """Not the form this reads (an rg that printed records without headings, or the path on a line of its
    own): no hits rather than wrong ones; the search then runs in process (test_grep_parity.py)."""
    assert parse_rg_output([b"./a.py\x001:one\n./a.py\x002:two\n"], 20) is None
    assert parse_rg_output([b"./a.py\x00\n1:one\n2:two\n"], 20) is None
    assert parse_rg_output([b"./a.py\x001:one\n2:two\n"], 20) is not None
