"""The repository map of one workspace: the index brought up to date, the files ranked for a goal, the
map rendered within `map_tokens`. What the planner's request and `paicli map` show."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paicli.common.events import EventSink
from paicli.repomap.files import Lister, git_files, read_source
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
        lister: Lister = git_files,
        map_tokens: int = DEFAULT_MAP_TOKENS,
    ) -> None:
        self.workspace = workspace
        self.map_tokens = map_tokens
        self.index = Index(workspace, index_folder(home, workspace), lister, sink)

    def for_goal(self, goal: str, *, map_tokens: int | None = None) -> MapResult:
        report = self.index.update()
        paths = self.index.paths
        ranking = rank(self.index, goal, paths, lambda path: read_source(self.workspace, path))
        budget = self.map_tokens if map_tokens is None else map_tokens
        rendered = render(paths, ranking.named, ranking.ranked, self.index.symbols, budget)
        return MapResult(goal=goal, rendered=rendered, named=ranking.named, update=report)

    def close(self) -> None:
        self.index.close()
