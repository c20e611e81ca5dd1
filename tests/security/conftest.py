"""Fixtures for the security tests: a workspace, the real tool box behind a real approval policy, and the bash
probe."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paicli.llm.types import ToolCall
from paicli.policy.approval import ApprovalPolicy, Mode
from paicli.policy.audit import AuditLog
from paicli.tools.base import Approver, ToolContext, ToolOutcome
from paicli.tools.toolbox import ToolBox
from tests.sandboxing import REQUIRED
from tests.security.bashgrammar import MARKERS
from tests.security.bashprobe import BashProbe, ProbeError


class Session:
    """What build_runtime wires for one session, on a temp workspace and a temp audit folder."""

    def __init__(self, workspace: Path, audit_dir: Path, mode: Mode | None, approve: Approver | None) -> None:
        self.workspace = workspace
        self.policy = ApprovalPolicy(workspace, mode=mode, audit=AuditLog(audit_dir, workspace=workspace))
        self.box = ToolBox.default(gate=self.policy, mark_data=True)
        self.ctx = ToolContext(workspace, task_id="task_1", approve=approve, command_timeout=20)

    async def call(self, name: str, **arguments: Any) -> ToolOutcome:
        return await self.box.execute(ToolCall(id="call_1", name=name, arguments=json.dumps(arguments)), self.ctx)

    async def run(self, command: str) -> ToolOutcome:
        return await self.call("execute_command", command=command)


@pytest.fixture
def session_factory(workspace: Path, tmp_path: Path) -> Any:
    def make(mode: Mode | None = None, approve: Approver | None = None) -> Session:
        return Session(workspace, tmp_path / "audit", mode, approve)

    return make


@pytest.fixture(scope="module")
def bash_probe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BashProbe]:
    """The real bash under bubblewrap with logging stand-ins for every program (tests/security/bashprobe.py),
    one per test module; skipped when bubblewrap cannot run here (a failure under PAICLI_REQUIRE_SANDBOX=1)."""
    with BashProbe(tmp_path_factory.mktemp("bashprobe"), names=MARKERS) as probe:
        try:
            probe.run("true")
        except ProbeError as error:
            if REQUIRED:
                pytest.fail(f"PAICLI_REQUIRE_SANDBOX=1 but the bash probe cannot run: {error}")
            pytest.skip(f"the bash probe cannot run here: {error}")
        yield probe
