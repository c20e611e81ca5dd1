"""The checkpoint store of one workspace: the shadow repository, the journal and the lock, under
`~/.paicli/checkpoints/<workspace id>/`, and the object-level operations the recorder and undo need.

Every object a step or an undo stores is kept alive by a ref under `refs/paicli/<entry>/` (an undo's
before the lock is released, a step's when it ends; a prune spares loose objects younger than a day, so
it never takes what a running step stored), and pruning drops an old entry's refs, then what nothing
else reaches. A repository that is missing or damaged is moved aside and a fresh one started.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from paicli.app.checkpoints.git import GitError, ShadowGit
from paicli.app.checkpoints.images import OTHER, Image, found_at
from paicli.app.checkpoints.journal import Journal, Window
from paicli.app.checkpoints.lock import StoreLock
from paicli.app.checkpoints.snapshot import DEFAULT_MAX_NEW_BYTES, DEFAULT_MAX_NEW_FILES, SnapshotLimits, Snapshotter

DEFAULT_KEEP = 50
DEFAULT_MAX_FILE_BYTES = 5_000_000
# What a running step has stored is kept by refs only once the step ends (one update-ref per step, not
# per write); until then a prune, by this or another paicli, spares loose objects younger than this.
UNKEPT_GRACE = "1.day.ago"
PRUNE_SLACK = 5  # entries beyond `keep` before a prune runs (a prune walks the whole repository)
_NULL_SHA = "0" * 40

Notify = Callable[[str], None]
Pair = tuple[Image | None, Image | None]


def workspace_id(workspace: Path) -> str:
    """`<folder name>-<hash of the real path>`: names what paicli keeps of a workspace under ~/.paicli
    (its checkpoints, its saved conversations)."""
    real = os.path.realpath(workspace)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", os.path.basename(real) or "root").strip(".-")[:40] or "root"
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    return f"{name}-{digest}"


def store_folder(home: Path, workspace: Path) -> Path:
    """`~/.paicli/checkpoints/<workspace id>`."""
    return home / ".paicli" / "checkpoints" / workspace_id(workspace)


def ref_folder(entry_id: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_-]+", entry_id):
        return f"refs/paicli/{entry_id}"
    return f"refs/paicli/x{hashlib.sha1(entry_id.encode(), usedforsecurity=False).hexdigest()[:24]}"


class CheckpointStore:
    def __init__(
        self,
        git_program: str,
        workspace: Path,
        folder: Path,
        *,
        notify: Notify,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_new_files: int = DEFAULT_MAX_NEW_FILES,
        max_new_bytes: int = DEFAULT_MAX_NEW_BYTES,
        keep: int = DEFAULT_KEEP,
    ) -> None:
        self.root = Path(os.path.realpath(workspace))
        self.folder = folder
        self.notify = notify
        self.keep_entries = keep
        self.git = ShadowGit(git_program, folder / "git", self.root, folder / "gitconfig")
        self.journal = Journal(folder / "entries")
        self.lock = StoreLock(folder.with_name(folder.name + ".lock"), notify=self.tell)
        self.limits = SnapshotLimits(max_file_bytes, max_new_files, max_new_bytes)
        self.snapshots = Snapshotter(self.git, self.root, limits=self.limits, notify=self.tell)

    def tell(self, message: str) -> None:
        """A notice for the user, through whatever `notify` is now (a front end sets its own later)."""
        self.notify(message)

    # ---- the repository itself ----

    def ensure(self) -> None:
        """A usable repository (created, or started afresh when missing or damaged). Call under the lock."""
        if self.git.exists():
            return
        if self.folder.exists():
            self.reset("its repository is missing")
            return
        self.git.init()
        (self.folder / "workspace").write_text(str(self.root) + "\n", encoding="utf-8", errors="surrogateescape")

    def reset(self, why: str) -> None:
        """Moves the store aside (replacing an earlier one moved aside) and starts a fresh one."""
        aside = self.folder.with_name(self.folder.name + ".damaged")
        shutil.rmtree(aside, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            os.replace(self.folder, aside)
        self.notify(
            f"the checkpoint store of this workspace was unusable ({why}); started a fresh one "
            f"(earlier checkpoints cannot be undone; the old one is in {aside})"
        )
        self.snapshots = Snapshotter(self.git, self.root, limits=self.limits, notify=self.tell)
        self.git.init()
        (self.folder / "workspace").write_text(str(self.root) + "\n", encoding="utf-8", errors="surrogateescape")

    # ---- contents ----

    def snapshot(self, label: str) -> str:
        return self.snapshots.take(f"paicli checkpoint: {label}"[:200])

    def store_disk(self, paths: Iterable[str]) -> dict[str, Image | None]:
        """What each path holds now, its content stored in the repository."""
        images: dict[str, Image | None] = {}
        for path in paths:
            with found_at(self.root, path) as found:
                if found is None or (found.target is None and found.fd is None):
                    images[path] = None if found is None else OTHER
                    continue
                store = ["hash-object", "-w", "--no-filters", "--stdin"]
                if found.target is not None:
                    out = self.git.run(store, input=found.target)
                else:  # git reads the file itself: a big one never passes through paicli's memory
                    out = self.git.run(store, stdin=found.fd)
                images[path] = Image(mode=found.mode, sha=out.decode().strip())
        return images

    def window(self, before: str, after: str) -> dict[str, Window]:
        """Every path whose content differs between two checkpoints."""
        if before == after:
            return {}
        out = self.git.run(["diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--raw", before, after])
        parts = out.split(b"\0")
        result: dict[str, Window] = {}
        for i in range(0, len(parts) - 1, 2):
            meta, path = parts[i].decode(), os.fsdecode(parts[i + 1])
            old_mode, new_mode, old_sha, new_sha = meta.lstrip(":").split()[:4]
            result[path] = Window(before=_image(old_mode, old_sha), after=_image(new_mode, new_sha))
        return result

    def keep(self, entry_id: str, shas: Iterable[str | None]) -> None:
        """Refs that keep these objects alive as long as the entry is kept."""
        folder = ref_folder(entry_id)
        lines = "".join(f"update {folder}/{sha} {sha}\n" for sha in dict.fromkeys(shas) if sha and sha != _NULL_SHA)
        if lines:
            self.git.run(["update-ref", "--stdin"], input=lines.encode())

    def keep_images(self, entry_id: str, images: Iterable[Image | None]) -> None:
        self.keep(entry_id, (i.sha for i in images if i is not None and i != OTHER))

    def tree_images(self, commit: str, paths: Iterable[str]) -> dict[str, Image]:
        """The images of these paths in a checkpoint (paths it does not hold are left out)."""
        wanted = list(paths)
        if not wanted:
            return {}
        out = self.git.run(["ls-tree", "-z", "--full-tree", commit, "--", *wanted])
        found: dict[str, Image] = {}
        for record in out.split(b"\0"):
            if b"\t" in record:
                meta, path = record.split(b"\t", 1)
                mode, _kind, sha = meta.decode().split()
                found[os.fsdecode(path)] = Image(mode=mode, sha=sha)
        return found

    def read_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        out = self.git.run(["cat-file", "--batch"], input="".join(f"{sha}\n" for sha in wanted).encode())
        blobs: dict[str, bytes] = {}
        pos = 0
        for sha in wanted:
            end = out.index(b"\n", pos)
            header = out[pos:end].decode().split()
            if len(header) != 3 or header[1] != "blob":
                raise GitError(f"checkpoint content {sha} is missing from the repository", damaged=True)
            size = int(header[2])
            blobs[sha] = out[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
        return blobs

    # ---- comparing contents ----

    def trees(self, pairs: Mapping[str, Pair]) -> tuple[str, str]:
        """Two trees holding the `before` and the `after` side of each path (for numstat and diffs)."""
        return self._tree({p: b for p, (b, _) in pairs.items()}), self._tree({p: a for p, (_, a) in pairs.items()})

    def _tree(self, images: Mapping[str, Image | None]) -> str:
        index = self.git.git_dir / f"paicli-tmp-index-{os.getpid()}"
        index.unlink(missing_ok=True)
        lines = b"".join(
            f"{image.mode} {image.sha}\t".encode() + os.fsencode(path) + b"\0"
            for path, image in sorted(images.items())
            if image is not None and image != OTHER
        )
        env = self.git.env(GIT_INDEX_FILE=str(index))
        try:
            if lines:
                self.git.run(["update-index", "-z", "--index-info"], input=lines, env=env)
            return self.git.run(["write-tree"], env=env).decode().strip()
        finally:
            index.unlink(missing_ok=True)

    def numstat(self, pairs: Mapping[str, Pair]) -> dict[str, tuple[int | None, int | None]]:
        """Lines added and removed per path (None, None for a binary file)."""
        if not pairs:
            return {}
        before, after = self.trees(pairs)
        out = self.git.run(["diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--numstat", before, after])
        stats: dict[str, tuple[int | None, int | None]] = {}
        for record in out.split(b"\0"):
            if record.count(b"\t") < 2:
                continue
            added, removed, path = record.split(b"\t", 2)
            stats[os.fsdecode(path)] = (_count(added), _count(removed))
        return stats

    def diff(self, pairs: Mapping[str, Pair]) -> str:
        """A unified diff of the pairs (text; binary files are named, not shown)."""
        if not pairs:
            return ""
        before, after = self.trees(pairs)
        args = ["diff-tree", "-r", "-p", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color", before, after]
        return self.git.run(args).decode("utf-8", "replace")

    # ---- housekeeping ----

    def prune(self) -> None:
        """Keeps the latest `keep_entries` entries; drops the others with everything only they used."""
        if self.journal.count() <= self.keep_entries + PRUNE_SLACK:
            return
        entries = self.journal.entries()
        for entry in entries[: len(entries) - self.keep_entries]:
            self.forget(entry.id)
        if len(list((self.git.git_dir / "objects" / "pack").glob("*.pack"))) > 1:
            # Packs (of checkpoints of many files) hold what only old entries used until repacked; -A
            # turns what nothing reaches loose, for the prune below to judge by its age.
            self.git.run(["-c", "pack.compression=1", "repack", "-A", "-d", "-q", "--window=0"])
        self.git.run(["prune", f"--expire={UNKEPT_GRACE}"])

    def forget(self, entry_id: str) -> None:
        """Drops an entry and the refs that kept its contents (the objects go at the next prune)."""
        out = self.git.run(["for-each-ref", "--format=%(refname)", ref_folder(entry_id) + "/"])
        refs = out.decode().split()
        if refs:
            self.git.run(["update-ref", "--stdin"], input="".join(f"delete {ref}\n" for ref in refs).encode())
        self.journal.delete(entry_id)


def _image(mode: str, sha: str) -> Image | None:
    return None if mode == "000000" or sha == _NULL_SHA else Image(mode=mode, sha=sha)


def _count(text: bytes) -> int | None:
    return None if text == b"-" else int(text)
