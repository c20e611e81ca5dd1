"""The tools' atomic write: a file is either the old one or the new one, never half written.

The sequence itself is paicli/common/atomic_write.py. What this adds for the tools is the workspace: with
`root`, the target's folder is reached by walking below `root` without following any symlink that
leads out of it (paicli/tools/beneath.py), at the moment of the write: a folder swapped for a symlink
after the workspace guard looked cannot send the file elsewhere. A symlink as the last component is
resolved the same way, so writing through a link inside the root replaces its target.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from paicli.common.atomic_write import write_in_folder, write_path
from paicli.tools.beneath import located


def atomic_write(path: Path, data: bytes | str, *, encoding: str = "utf-8", root: Path | None = None) -> None:
    """Write `data` to `path` through a temp file in the same folder, fsync, then rename over `path`.

    Keeps the mode bits of an existing file; a new file gets 0o644 minus the umask. Missing parent
    folders are created. On any exception (KeyboardInterrupt included) the temp file is removed and
    the original file is left untouched. With `root`, `path` must lie below it (see the module doc).
    """
    payload = data.encode(encoding) if isinstance(data, str) else data
    if root is None:
        write_path(path, payload)
        return
    with located(root, path, create_folders=True) as spot:
        if spot.name is None:
            raise IsADirectoryError(errno.EISDIR, "is a folder", os.fspath(path))
        write_in_folder(spot.folder, spot.name, payload)
