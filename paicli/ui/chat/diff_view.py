"""A write's diff under its tool line: `+n −m`, then the first lines of the unified diff in colour.

The diff comes from the tool (`tool_result.diff`, paicli/tools/diff.py) and is untrusted text: every line
goes through the sanitizer and is shown only as `Text`, never parsed as markup.
"""

from __future__ import annotations

from rich.text import Text

from paicli.common.sanitize import terminal_safe

SHOWN_DIFF_LINES = 24
INDENT = "    "
LINE_STYLES = {"+": "green", "-": "red"}


def diff_counts(diff: str) -> tuple[int, int]:
    """(added, removed) lines of a unified diff, its `+++`/`---` headers left out."""
    added = removed = 0
    for line in diff.split("\n"):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def counts_text(diff: str) -> Text:
    added, removed = diff_counts(diff)
    return Text.assemble((f"+{added}", "green"), " ", (f"−{removed}", "red"))


def inline_diff(diff: str, *, limit: int = SHOWN_DIFF_LINES, expand_hint: str = "") -> Text:
    """The hunks of `diff` (file headers dropped: the tool line names the file), at most `limit` lines,
    then how many more there are."""
    body = [line for line in diff.split("\n") if not line.startswith(("---", "+++"))]
    text = Text()
    for line in body[:limit]:
        safe = terminal_safe(line)
        text.append(INDENT + safe + "\n", style=LINE_STYLES.get(safe[:1], "dim") if safe[:2] != "@@" else "cyan")
    if len(body) > limit:
        text.append(f"{INDENT}… {len(body) - limit} more diff lines{expand_hint}\n", style="dim")
    text.rstrip()
    return text
