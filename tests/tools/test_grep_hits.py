"""rg's output read as it comes: whatever pieces it arrives in (a byte at a time, a record cut anywhere,
a binary note after the file's lines), the hits are those of the whole output read at once."""

from __future__ import annotations

import random

from paicli.tools.grep_hits import FileHits, RgOutput, parse_rg_output

OUTPUT = (
    b"./a.py\x001:def handler(): pass\n"
    b"./a.py\x003:handler = 1\n"
    b"./big.dat\x001:handler early\n"
    b'./big.dat: binary file matches (found "\\0" byte around offset 200028)\n'
    + b"".join(b"./many.py\x00%d:handler %d\n" % (n, n) for n in range(1, 60))
    + b'./e.py: binary file matches (found "\\0" byte around offset 9)\n'
    b"./caf\xc3\xa9.py\x0012:handler \xff\xfe caf\xc3\xa9\n"
    b"./sub/b.py\x007:x = handler  # a:b:c\n"
)


def test_the_whole_output_gives_each_files_count_and_first_lines() -> None:
    hits = parse_rg_output([OUTPUT], 20)
    assert sorted(hits) == ["a.py", "café.py", "many.py", "sub/b.py"]  # the binary ones dropped
    assert hits["a.py"] == FileHits("a.py", 2, [(1, "def handler(): pass"), (3, "handler = 1")])
    assert hits["many.py"].count == 59 and len(hits["many.py"].lines) == 20
    assert hits["sub/b.py"].lines == [(7, "x = handler  # a:b:c")]
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
