"""The repository map of one workspace: the index brought up to date, the files ranked for a goal, the
map rendered within `map_tokens`. What the planner's request and `paicli map` show."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from paicli.common.events import EventSink, Notice
from paicli.llm.tokens import estimate_text
from paicli.repomap.files import Lister, read_source, workspace_files
from paicli.repomap.index import Index, UpdateReport, index_folder
from paicli.repomap.rank import rank
from paicli.repomap.render import RenderedMap, render

DEFAULT_MAP_TOKENS = 3_000


@dataclass(frozen=True)
class MapResult:
    goal: str
    rendered: RenderedMap
    named: list[str]  # files the goal names
    update: UpdateReport

    @property
    def text(self) -> str:
        return self.rendered.text


class RepoMap:
    def __init__(
        self,
        workspace: Path,
        home: Path,
        sink: EventSink,
        *,
        lister: Lister = workspace_files,
        map_tokens: int = DEFAULT_MAP_TOKENS,
    ) -> None:
        self.workspace = workspace
        self.map_tokens = map_tokens
        self.index = Index(workspace, index_folder(home, workspace), lister, sink)

    def for_goal(self, goal: str, *, map_tokens: int | None = None) -> MapResult:
        report = self.index.update()
        paths = self.index.paths
        try:
            ranking = rank(self.index, goal, paths, lambda path: read_source(self.workspace, path))
        except sqlite3.DatabaseError as error:  # a page damaged since it was written: build it again
            self.index.discard(error)
            report = self.index.update()
            paths = self.index.paths
            ranking = rank(self.index, goal, paths, lambda path: read_source(self.workspace, path))
        budget = self.map_tokens if map_tokens is None else map_tokens
        rendered = render(paths, ranking.named, ranking.ranked, self.index.symbols, budget)
        return MapResult(goal=goal, rendered=rendered, named=ranking.named, update=report)

    def close(self) -> None:
        self.index.close()


class PlannerMap:
    """The map as the planner asks for it: text for a goal ("" when `map_tokens` is 0 or the map fails),
    and the share of the planner's latest request it took (for the review screen)."""

    def __init__(self, repo_map: RepoMap, sink: EventSink, *, ready: Callable[[], None] | None = None) -> None:
        """`ready`: waits for the session's index warm-up (paicli/repomap/warmup.py), if any."""
        self.repo_map = repo_map
        self.sink = sink
        self.ready = ready
        self.last: tuple[int, int] | None = None  # (map tokens, whole request tokens) of the latest request

    def __call__(self, goal: str) -> str:
        if self.repo_map.map_tokens <= 0:
            return ""
        if self.ready is not None:
            self.ready()
        try:
            return self.repo_map.for_goal(goal).text
        except (OSError, sqlite3.Error) as error:  # the plan goes on without a map
            self.sink.emit(Notice(level="warning", message=f"no repository map for this plan: {error}"))
            return ""

    def sent(self, map_text: str, request_tokens: int) -> None:
        self.last = (estimate_text(map_text), request_tokens)


def map_summary(result: MapResult, map_tokens: int) -> dict[str, object]:
    """What `paicli map --json` prints (and `/map` summarises): the map and the figures behind it."""
    update = result.update
    return {
        "goal": result.goal,
        "map_tokens": map_tokens,
        "tokens": result.rendered.tokens,
        "files": result.rendered.files,
        "named": result.named,
        "with_symbols": result.rendered.with_symbols,
        "index": {"listed": update.listed, "read": update.read, "pending": update.pending, "seconds": update.seconds},
        "text": result.text,
    }
