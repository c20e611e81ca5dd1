"""A repository's folders of Markdown files in its `.paicli/`: prompt overrides (`.paicli/prompts/*.md`,
which replace paicli's own prompts) and custom commands (`.paicli/commands/*.md`). They are someone else's
text, used only once trusted (paicli/trust.py): each file is remembered by repository, name and hash, the
untrusted ones are asked about together at start-up (`screen_repo_folder`), and a file is read back only
as it was trusted (`trusted_text`). Symlinks and special files are refused, never followed; this module
never prints (warnings go to the caller's `warn`)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from paicli.tools.confined import UnsafeFile, kind_of, open_folder
from paicli.trust import ConfirmTrust, RepoFile, TrustRequest, TrustStore, Warn, read_repo_file

PROMPTS_FOLDER = ".paicli/prompts"
COMMANDS_FOLDER = ".paicli/commands"
MAX_PROMPT_FILES = 500  # entries of .paicli/prompts (or .paicli/commands) looked at


@dataclass(frozen=True)
class RepoFolder:
    """A folder of a repository's `.paicli/` whose `.md` files are used only once trusted, each file
    remembered by repository, name and hash: what it is called in warnings and questions."""

    relative: str  # ".paicli/prompts"
    plural: str  # "prompt overrides"
    singular: str  # "prompt override"


PROMPTS = RepoFolder(PROMPTS_FOLDER, "prompt overrides", "prompt override")
COMMANDS = RepoFolder(COMMANDS_FOLDER, "custom commands", "custom command")


def markdown_files(workspace: Path, folder: str = PROMPTS_FOLDER) -> tuple[list[str], list[str]]:
    """(the `.md` files under `folder` (below the workspace) that may be used, the entries refused:
    symlinks and special files), as paths relative to that folder. UnsafeFile when `.paicli` or the folder
    itself is a symlink. Nothing is followed: a symlinked folder inside is refused, not walked."""
    root = Path(os.path.realpath(workspace))
    try:
        opened = open_folder(root, folder.split("/"))
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    usable: list[str] = []
    refused: list[str] = []
    try:
        for current, folders, files, current_fd in os.fwalk(".", dir_fd=opened, follow_symlinks=False):
            for name in sorted([*folders, *files]):
                relative = os.path.normpath(os.path.join(current, name))
                try:
                    mode = os.stat(name, dir_fd=current_fd, follow_symlinks=False).st_mode
                except OSError:
                    continue
                if stat.S_ISLNK(mode):
                    refused.append(f"{relative} (a symlink)")
                elif stat.S_ISREG(mode) and name.endswith(".md"):
                    usable.append(relative)
                elif not stat.S_ISDIR(mode) and name.endswith(".md"):
                    refused.append(f"{relative} ({kind_of(mode)})")
            if len(usable) + len(refused) >= MAX_PROMPT_FILES:
                break
    finally:
        os.close(opened)
    return usable, refused


def screen_prompt_overrides(workspace: Path, *, home: Path, confirm: ConfirmTrust | None = None, warn: Warn) -> None:
    """A repository's `.paicli/prompts/*.md` replace paicli's own prompts, so they are applied only once
    trusted (see `trusted_prompt`)."""
    screen_repo_folder(workspace, PROMPTS, home=home, confirm=confirm, warn=warn)


def screen_repo_folder(
    workspace: Path, folder: RepoFolder, *, home: Path, confirm: ConfirmTrust | None = None, warn: Warn
) -> None:
    """The `.md` files of a repository's `folder` that are not trusted yet are asked about here together,
    each file remembered by repository, name and hash (`trusted_text` reads one back). Symlinked ones are
    refused with a warning and never asked about."""
    try:
        usable, refused = markdown_files(workspace, folder.relative)
    except (UnsafeFile, OSError) as error:
        reason = error if isinstance(error, UnsafeFile) else error.strerror or error
        warn(f"ignoring this repository's {folder.plural}: {reason}")
        return
    if refused:
        warn(f"ignoring {folder.plural} {', '.join(refused)}: only regular files in {folder.relative} are used")
    store = TrustStore(home)
    untrusted: list[RepoFile] = []
    for relative in usable:
        try:
            file = read_repo_file(workspace, f"{folder.relative}/{relative}")
        except (UnsafeFile, OSError) as error:
            warn(f"ignoring the {folder.singular} {relative}: {error}")
            continue
        if file is not None and not store.is_trusted(file):
            untrusted.append(file)
    if not untrusted:
        return
    names = ", ".join(file.relative.removeprefix(folder.relative + "/") for file in untrusted)
    root = untrusted[0].workspace
    if confirm is not None and confirm(TrustRequest(root / folder.relative, {folder.plural: names})):
        for file in untrusted:
            store.trust(file)
        return
    warn(f"ignoring this repository's {folder.plural} ({names}): not trusted yet")


def trusted_prompt(workspace: Path, home: Path, name: str) -> str | None:
    """The text of `.paicli/prompts/<name>` when the user trusts that file as it is now; else None."""
    return trusted_text(workspace, home, f"{PROMPTS_FOLDER}/{name}")


def trusted_text(workspace: Path, home: Path, relative: str) -> str | None:
    """The text of the repository's file `relative` when the user trusts that file as it is now; else
    None. What is checked is what is returned: the bytes read once, hashed and decoded."""
    try:
        file = read_repo_file(workspace, relative)
    except (UnsafeFile, OSError):
        return None
    if file is None or not TrustStore(home).is_trusted(file):
        return None
    return file.data.decode("utf-8", errors="replace")
