"""`find` as a reader: its starting points are paths, and some primaries write, run programs or follow
symlinks out of the workspace."""

from __future__ import annotations

from paicli.shell.syntax import Word

UNSAFE = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-L", "-follow"}
)
NAME_LISTS = frozenset({"-files0-from"})
PATHS = frozenset({"-newer", "-anewer", "-cnewer", "-samefile"})
# Primaries that take one value that is not a path.
VALUED = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-regextype",
        "-type",
        "-xtype",
        "-size",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-mtime",
        "-atime",
        "-ctime",
        "-mmin",
        "-amin",
        "-cmin",
        "-maxdepth",
        "-mindepth",
        "-links",
        "-inum",
        "-printf",
        "-fstype",
        "-used",
        "-context",
        "-lname",
        "-ilname",
        "-D",
        "-O",
    }
)
_EXPRESSION_START = ("-", "(", "!", ")", ",")


def check_find(args: tuple[Word, ...]) -> tuple[str | None, list[Word]]:
    """(why find is not read-only here or None, the words to check as paths)."""
    paths: list[Word] = []
    index = 0
    while index < len(args) and args[index].text in ("-H", "-P"):
        index += 1
    while index < len(args) and not args[index].text.startswith(_EXPRESSION_START):
        paths.append(args[index])
        index += 1
    while index < len(args):
        text = args[index].text
        if text in UNSAFE:
            return f"find {text} can write files or run programs", paths
        if text in NAME_LISTS:
            return f"find {text} reads file names paicli cannot check", paths
        if text in PATHS or (text.startswith("-newer") and len(text) == 8):
            if index + 1 < len(args):
                paths.append(args[index + 1])
            index += 2
            continue
        index += 2 if text in VALUED else 1
    return None, paths
