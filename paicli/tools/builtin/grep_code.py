"""grep_code: the lines matching an RE2 regular expression in the workspace's files, grouped by file.

The files are the model's view of the workspace (paicli/tools/file_lister.py: what git shows, minus
`.paicliignore`): a git-ignored `.env` is never searched unless `include_ignored` asks for it. One regex
syntax, RE2's (paicli/tools/regex_syntax.py); `rg` from PATH walks the folder when present, judged by the
listing (paicli/tools/grep_walk.py), the search in process otherwise, with the same results
(paicli/tools/grep_search.py). Binary files, files over
5 MB and version control folders are skipped.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from fnmatch import fnmatchcase
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from paicli.tools.base import Effect, Tool, ToolContext, ToolFailure
from paicli.tools.file_kinds import Selection, select
from paicli.tools.file_lister import all_files, is_ignored, list_files
from paicli.tools.git_env import program_outside
from paicli.tools.git_listing import SharedGit
from paicli.tools.glob_pattern import glob_to_regex
from paicli.tools.grep_hits import FileHits
from paicli.tools.grep_walk import Scope, search_tree
from paicli.tools.guard import display_path, resolve_in_workspace
from paicli.tools.regex_syntax import PatternError, compile_pattern

MAX_MATCHES = 200  # lines shown in all
MAX_PER_FILE = 20  # lines shown of one file
MAX_LINE_CHARS = 300
MAX_FOLDERS_NAMED = 8


class GrepCodeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        description="RE2 regular expression searched in each line, e.g. `def \\w+_test`. Prefix `(?i)` to "
        "ignore case. No backreferences, no lookahead or lookbehind."
    )
    path: str = Field(
        default=".", description="File or folder to search, relative to the workspace. Default: the workspace."
    )
    glob: str | None = Field(
        default=None,
        description="Only search files whose name matches this glob, e.g. `*.py` (a pattern with `/` "
        "is matched against the path relative to `path`).",
    )
    include_ignored: bool = Field(
        default=False,
        description="Also search files that .gitignore or .paicliignore leave out (build output, .env).",
    )


class GrepCode(Tool):
    name = "grep_code"
    description = (
        "Search the workspace's text files for a regular expression (RE2 syntax: no backreferences or "
        "lookaround). Results are grouped by file, sorted by path: `path (N matches)`, then `line: text`. "
        "Skips binary files and what .gitignore or .paicliignore leave out, unless `include_ignored`."
    )
    Args = GrepCodeArgs
    effect = Effect.READ
    confined = True
    path_argument = "path"
    summary_argument = "pattern"
    untrusted_output = True

    async def run(self, args: GrepCodeArgs, ctx: ToolContext) -> str:
        try:
            pattern = compile_pattern(args.pattern)
        except PatternError as error:
            raise ToolFailure(str(error)) from None
        base = resolve_in_workspace(ctx.workspace, args.path, for_write=False)
        shown_base = display_path(ctx.workspace, base)
        if not base.exists():
            raise ToolFailure(f"not found: {shown_base}")
        root = Path(os.path.realpath(ctx.workspace))
        relative = os.path.relpath(os.path.realpath(base), root).replace(os.sep, "/")
        is_dir = base.is_dir()
        git = SharedGit(root)  # one configuration look-up for the listing and rg's walk

        def choose() -> Selection:
            if relative != "." and not args.include_ignored and is_ignored(root, relative, is_dir=is_dir, git=git):
                raise ToolFailure(
                    f"{shown_base} is ignored (.gitignore or .paicliignore); search it with include_ignored=true, "
                    "or read it with read_file"
                )
            keep = _in_scope(relative, is_dir, args.glob)
            if is_dir and not args.include_ignored and ctx.listings is not None:
                remembered = ctx.listings.view(root, git)
                if remembered is not None:
                    return remembered.selection(keep)
            if not is_dir:
                listed = [relative]
            elif args.include_ignored:
                listed = all_files(root)
            else:
                listed = list(list_files(root, git=git, worktree=False).files)
            return select(root, [path for path in listed if keep(path)])

        rg = program_outside("rg", root, os.environ.get("PATH", os.defpath))
        scope = Scope("" if relative == "." else relative, args.glob, args.include_ignored, walk=is_dir)
        found = await search_tree(root, scope, choose, pattern, MAX_PER_FILE, rg, git, ctx.listings)
        return report(found.hits, args.pattern, shown_base, found.too_large)


def _in_scope(relative: str, is_dir: bool, name_glob: str | None) -> Callable[[str], bool]:
    """Whether a listed file (workspace-relative) is one to search: below the folder `relative` (or that
    file), and matching the glob (a glob with `/` against the path below the folder, else the name).
    Tracked files deleted from the work tree may be listed (the listing does not stat: select() does)."""
    if not is_dir:
        return lambda path: path == relative
    prefix = "" if relative == "." else relative + "/"
    if not name_glob:
        return lambda path: path.startswith(prefix)
    if "/" in name_glob:
        matcher = glob_to_regex(name_glob.removeprefix("./"))
        return lambda path: path.startswith(prefix) and matcher.fullmatch(path[len(prefix) :]) is not None
    return lambda path: path.startswith(prefix) and fnmatchcase(path.rsplit("/", 1)[-1], name_glob)


def report(hits: list[FileHits], pattern: str, where: str, too_large: int) -> str:
    """Hits grouped by file, at most MAX_PER_FILE lines a file and MAX_MATCHES in all; what is left out is
    counted, with the folders it is in."""
    if not hits:
        lines = [f"no matches for {pattern!r} in {where}"]
    else:
        lines = []
        budget = MAX_MATCHES
        rest: list[FileHits] = []
        for hit in hits:
            if budget <= 0:
                rest.append(hit)
                continue
            lines.append(f"{hit.path} ({hit.count} {'match' if hit.count == 1 else 'matches'})")
            shown = hit.lines[:budget]
            budget -= len(shown)
            lines.extend(f"  {number}: {_clip(text)}" for number, text in shown)
            if hit.count > len(shown):
                lines.append(f"  ... {hit.count - len(shown)} more in this file")
        if rest:
            lines.append(_rest_note(rest))
    if too_large:
        lines.append(f"({too_large} files larger than 5 MB were not searched)")
    return "\n".join(lines)


def _rest_note(rest: list[FileHits]) -> str:
    folders = Counter(hit.path.rpartition("/")[0] + "/" if "/" in hit.path else "./" for hit in rest)
    named = sorted(folders.items(), key=lambda item: (-item[1], item[0]))
    listed = ", ".join(f"{folder} ({count})" for folder, count in named[:MAX_FOLDERS_NAMED])
    if len(named) > MAX_FOLDERS_NAMED:
        listed += f" and {len(named) - MAX_FOLDERS_NAMED} more folders"
    matches = sum(hit.count for hit in rest)
    return (
        f"... {matches} more matches in {len(rest)} more files not shown, in {listed}; narrow the pattern, path or glob"
    )


def _clip(line: str) -> str:
    line = line.rstrip()
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " ..."
