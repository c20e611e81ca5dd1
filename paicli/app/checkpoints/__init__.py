"""Checkpoints and undo: every chat turn and every plan task that may write is recorded in a shadow git
repository outside the workspace (`~/.paicli/checkpoints/<workspace id>/`), so a turn, a plan, or one
task of a plan can be taken back, and the user sees what each one changed.

Modules: git.py (the isolated `git` command), snapshot.py (a checkpoint of the workspace), images.py
(what a path holds), journal.py (the record of each turn and plan), attribution.py (who changed what),
recording.py (recording as work runs), restore.py (atomic, symlink-safe writes back), undo.py (undo and
redo), store.py (the store of one workspace), service.py (for async callers), plan_steps.py (around
plan tasks), report.py (words for the front ends).
"""
