"""What a write changed, as a unified diff for the display: built by write_file and edit_file, carried on
their result (`Changed`, a str that is the text the model sees) and never sent to the model."""

from __future__ import annotations

import difflib

MAX_DIFF_LINES = 1000  # of one result's diff; the display shows far fewer, `/changes` has the whole


class Changed(str):
    """A tool's result text with the diff of what the call changed (`diff`, "" when nothing did)."""

    diff: str

    def __new__(cls, text: str, diff: str) -> Changed:
        result = super().__new__(cls, text)
        result.diff = diff
        return result


def file_diff(path: str, before: str | None, after: str) -> str:
    """A unified diff of one file (`before` None: created), at most MAX_DIFF_LINES lines, with a last
    line saying how many more there were."""
    lines = list(
        difflib.unified_diff(
            (before or "").splitlines(),
            after.splitlines(),
            "/dev/null" if before is None else f"a/{path}",
            f"b/{path}",
            lineterm="",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more diff lines"]
    return "\n".join(lines)
