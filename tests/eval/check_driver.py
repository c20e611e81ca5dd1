"""Runs `python -m pytest ARGS` checks in many workspaces in one process (test_builtin_suite.py starts it
once instead of a pytest process per check): argv is a JSON list of [workspace, [pytest args]]; prints a
JSON list of exit codes. Each check runs with the workspace as the current folder and first on sys.path
(as `python -m pytest` there would), and the modules it imported are forgotten before the next."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys

import pytest


def run_one(workspace: str, args: list[str]) -> int:
    before, path = set(sys.modules), list(sys.path)
    os.chdir(workspace)
    sys.path.insert(0, workspace)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return int(pytest.main(["-p", "no:cacheprovider", f"--rootdir={workspace}", *args]))
    finally:
        for name in set(sys.modules) - before:
            del sys.modules[name]
        sys.path[:] = path


if __name__ == "__main__":
    jobs = json.loads(sys.argv[1])
    print(json.dumps([run_one(workspace, args) for workspace, args in jobs]))
