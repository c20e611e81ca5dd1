"""Writing a line to a stream whole, even when its file is non-blocking.

The file behind stdout can be non-blocking without paicli asking: O_NONBLOCK belongs to the open pipe,
shared with the parent that made it and every process holding it (a Node.js parent, a tool that set it
on its own stdout). A write to a full pipe then fails with EAGAIN part way, and Python's buffered
streams lose the rest of the line: `--json` output was cut at 64 or 128 KB while paicli went on and
exited 0. Here the text goes to the file descriptor directly, waiting until the pipe can take more.
"""

from __future__ import annotations

import os
import select
from typing import TextIO


def write_whole(stream: TextIO, text: str) -> None:
    """`text` written to `stream` and flushed, all of it, whether the file is blocking or not."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a StringIO in tests)
        stream.write(text)
        stream.flush()
        return
    stream.flush()  # what was written through the stream before goes first
    data = memoryview(text.encode(stream.encoding or "utf-8", stream.errors or "strict"))
    while data:
        try:
            data = data[os.write(fd, data) :]
        except BlockingIOError:
            select.select([], [fd], [])
