from mdtools.anchors import anchor
from mdtools.headings import headings
from mdtools.toc import toc

DOC = "# Guide\n\nText.\n\n## Install it!\n\n### On Linux ###\n\n## Use\n"


def test_headings():
    assert headings(DOC) == [(1, "Guide"), (2, "Install it!"), (3, "On Linux"), (2, "Use")]


def test_anchor():
    assert anchor("Install it!") == "install-it" and anchor("C++ & you") == "c--you"


def test_toc():
    assert toc(DOC).splitlines() == [
        "- [Guide](#guide)",
        "  - [Install it!](#install-it)",
        "    - [On Linux](#on-linux)",
        "  - [Use](#use)",
    ]
    assert toc("no headings") == ""
