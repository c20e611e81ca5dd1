"""The REPL keeps Enter a CR between prompts (Ctrl+J adds a line), and gives an editor the usual CR → LF."""

from __future__ import annotations

import os
import termios

from paicli.ui.prompt.keys import enter_ends_lines, enter_stays_enter


def translates_cr(fd: int) -> bool:
    return bool(termios.tcgetattr(fd)[0] & termios.ICRNL)


def test_cr_stays_cr_for_the_repl_and_becomes_lf_again_for_an_editor() -> None:
    parent, child = os.openpty()
    with os.fdopen(child, "r") as terminal:
        assert translates_cr(child)
        with enter_stays_enter(terminal):
            assert not translates_cr(child)
            os.write(parent, b"typed ahead\r\n")  # the line feed ends the line for this read
            assert os.read(child, 100) == b"typed ahead\r\n"  # Enter stays CR, not a line feed (Ctrl+J)
            with enter_ends_lines(terminal):
                assert translates_cr(child)
            assert not translates_cr(child)
        assert translates_cr(child)
    os.close(parent)


def test_without_a_terminal_nothing_changes() -> None:
    with open(os.devnull) as stream, enter_stays_enter(stream):
        pass
