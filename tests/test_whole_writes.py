"""A line written to a non-blocking pipe arrives whole: the writer waits for a late reader instead of losing
what did not fit (`--json` lines were cut at 64 or 128 KB, paicli exiting 0)."""

from __future__ import annotations

import io
import os
import threading
import time

from paicli.common.whole_writes import write_whole


def test_a_non_blocking_pipe_gets_every_byte_of_a_long_line_in_order() -> None:
    read, write = os.pipe()
    os.set_blocking(write, False)  # as a parent sharing the pipe may have made it
    received: list[bytes] = []

    def late_reader() -> None:
        time.sleep(0.3)  # the pipe is full long before
        with os.fdopen(read, "rb") as stream:
            while chunk := stream.read1(1 << 16):
                received.append(chunk)

    reader = threading.Thread(target=late_reader)
    reader.start()
    with os.fdopen(write, "w", encoding="utf-8") as stream:
        stream.write("before\n")  # buffered in the stream: it must come first
        line = "é" + "x" * 500_000 + "\n"
        write_whole(stream, line)
        write_whole(stream, "after\n")
    reader.join()
    assert b"".join(received).decode() == "before\n" + line + "after\n"


def test_a_stream_without_a_file_is_written_as_usual() -> None:
    stream = io.StringIO()
    write_whole(stream, "one line\n")
    assert stream.getvalue() == "one line\n"
