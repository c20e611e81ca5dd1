"""The filesystem memos of one paicli session (folders.py): the folder listings of the walks for
git-controlled paths (gitdirs.py) and of the scans for sockets (sockets.py). Made once with the session's
sandbox choice and passed to whatever walks or scans (the sandbox before each command, the approval
policy's git guard, the check for git-controlled paths a command made), so a walk reads again only the
folders that changed since the last one."""

from __future__ import annotations

from dataclasses import dataclass, field

from paicli.sandbox.folders import Folders
from paicli.sandbox.gitdirs import walk_folders
from paicli.sandbox.sockets import scan_folders


@dataclass(eq=False)
class FolderMemos:
    git: Folders = field(default_factory=walk_folders)
    sockets: Folders = field(default_factory=scan_folders)
