"""What the slash commands may read of the REPL (part of their `CommandContext`, paicli/ui/commands/context.py): views
of its runtime, renderer and checkpoints, kept apart so that repl.py holds the loop and the actions."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console, RenderableType

from paicli.common.values import Usage
from paicli.llm.price import Price
from paicli.policy.approval import ApprovalPolicy
from paicli.runtime import Runtime
from paicli.sandbox import SandboxChoice
from paicli.ui.chat.render import ChatRenderer

if TYPE_CHECKING:
    from paicli.app.checkpoints.service import Checkpoints
    from paicli.mcp.manager import McpManager
    from paicli.repomap.files import Lister
    from paicli.ui.chat.transcript import Transcript


class ReplViews:
    runtime: Runtime
    renderer: ChatRenderer
    console: Console
    _checkpoints: Checkpoints | None

    @property
    def workspace(self) -> Path:
        return self.runtime.workspace

    @property
    def home(self) -> Path:
        return self.runtime.home

    @property
    def map_tokens(self) -> int:
        return self.runtime.settings.map_tokens

    @property
    def map_lister(self) -> Lister:
        from paicli.repomap.files import watched_files

        return watched_files(self.runtime.watched)

    def map_ready(self) -> None:
        if self.runtime.map_warmup is not None:
            self.runtime.map_warmup.wait()

    @property
    def policy(self) -> ApprovalPolicy | None:
        return self.runtime.policy

    @property
    def sandbox(self) -> SandboxChoice:
        return self.runtime.sandbox

    @property
    def last_thinking(self) -> str:
        return self.renderer.thinking.last

    @property
    def session_usage(self) -> Usage:
        return self.renderer.session_usage

    @property
    def prices(self) -> Mapping[str, Price]:
        return self.runtime.settings.prices

    @property
    def checkpoints(self) -> Checkpoints | None:
        return self._checkpoints

    @property
    def mcp(self) -> McpManager | None:
        return self.runtime.mcp

    @property
    def transcript(self) -> Transcript:
        """The last turn or plan whole, for /expand and /transcript."""
        return self.renderer.transcript

    async def page(self, renderable: RenderableType) -> None:
        from paicli.ui.chat.changes_view import page

        await page(self.console, renderable)
