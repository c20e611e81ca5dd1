"""`paicli map [GOAL] [--json]`: the repository map the planner would be given for GOAL, without a model.

Text: the map on stdout, a line of figures on stderr. `--json`: one JSON object on stdout (`map_summary`).
What the index had to say (a rebuilt index) goes to stderr. Exit 0, or 2 for a usage error.
"""

from __future__ import annotations

import json
import sys
from typing import TextIO

from paicli.common.errors import EXIT_OK
from paicli.common.events import AnyEvent, Notice
from paicli.common.sanitize import terminal_safe
from paicli.config import Settings, user_home
from paicli.repomap.repo_map import RepoMap, map_summary


class _StderrNotices:
    def emit(self, event: AnyEvent) -> None:
        if isinstance(event, Notice):
            print(f"paicli: {terminal_safe(event.message)}", file=sys.stderr)


def map_command(settings: Settings, goal: str, *, json_mode: bool, out: TextIO = sys.stdout) -> int:
    repo_map = RepoMap(settings.workspace, user_home(), _StderrNotices(), map_tokens=settings.map_tokens)
    try:
        result = repo_map.for_goal(goal)
    finally:
        repo_map.close()
    if json_mode:
        out.write(json.dumps(map_summary(result, settings.map_tokens), ensure_ascii=False) + "\n")
        return EXIT_OK
    out.write(terminal_safe(result.text) + "\n")
    update = result.update
    print(
        f"paicli: {result.rendered.tokens:,} of {settings.map_tokens:,} map tokens, {len(result.rendered.files):,} of "
        f"{update.listed:,} files named; index: {update.read:,} files read in {update.seconds:.2f} s",
        file=sys.stderr,
    )
    return EXIT_OK
