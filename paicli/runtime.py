"""Wiring: builds the collaborators of one paicli process from Settings and passes them in explicitly."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paicli.agent.compress import Compressor
from paicli.agent.context import load_prompt, system_prompt
from paicli.agent.react import ReactLoop
from paicli.common.events import EventSink, Notice
from paicli.config import Settings, user_home
from paicli.llm.capability_store import FILE_NAME as CAPABILITIES_FILE
from paicli.llm.capability_store import CapabilityStore
from paicli.llm.client import LLMClient
from paicli.llm.endpoint import Endpoint
from paicli.llm.retry import Backoff
from paicli.llm.shared_gate import SharedClosure
from paicli.llm.types import ChatModel
from paicli.mcp import sdk
from paicli.mcp.server_config import expand
from paicli.policy.approval import ApprovalPolicy
from paicli.policy.audit import AuditLog, audit_folder
from paicli.policy.hooks import Hooks
from paicli.policy.rules import Rules
from paicli.sandbox import SandboxChoice, choose_sandbox
from paicli.sandbox.memos import FolderMemos
from paicli.tools.base import Approver, PathLocks, ToolContext
from paicli.tools.listing_memo import ListingMemo
from paicli.tools.task_scope import TaskScope
from paicli.tools.toolbox import ToolBox

if TYPE_CHECKING:  # plan mode loads with the first plan, not at start-up
    from paicli.mcp.manager import McpManager
    from paicli.plan.contract import Contract
    from paicli.plan.estimate import Estimator
    from paicli.repomap.repo_map import PlannerMap
    from paicli.repomap.warmup import MapWarmup
    from paicli.tools.watched_listing import WatchedListings

SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def secret_values(settings: Settings, env: dict[str, str] | None = None) -> list[str]:
    """The configured key and the values of secret-looking environment variables (long enough to matter)."""
    env = dict(os.environ) if env is None else env
    values = {value for name, value in env.items() if any(p in name.upper() for p in SECRET_NAME_PARTS)}
    if settings.api_key is not None:
        values.add(settings.api_key.get_secret_value())
    for server in settings.mcp_servers.values():  # credentials in an MCP server's config, as sent
        secret_env = [value for name, value in server.env.items() if any(p in name.upper() for p in SECRET_NAME_PARTS)]
        for written in [*server.headers.values(), *secret_env]:
            with contextlib.suppress(ValueError):  # a ${VAR} that is not set: that server will not start
                value = expand(written, env)
                values.update({value, value.removeprefix("Bearer ").strip()})
    return sorted((v for v in values if len(v) >= 6), key=len, reverse=True)


@dataclass
class Runtime:
    settings: Settings
    sink: EventSink
    llm: LLMClient
    tools: ToolBox = field(default_factory=ToolBox.default)
    locks: PathLocks = field(default_factory=PathLocks)
    home: Path = field(default_factory=Path.home)
    _secrets: list[str] | None = field(default=None, repr=False)
    _compressor_text: str | None = field(default=None, repr=False)
    approve: Approver | None = None  # the human in the loop (the REPL's prompt); None: nobody to ask
    policy: ApprovalPolicy | None = None  # the gate of `tools`; /approval changes its mode
    sandbox: SandboxChoice = field(default_factory=lambda: SandboxChoice("off", None))  # what contains commands
    mcp: McpManager | None = None  # the MCP servers, when any is configured; their tools join `tools` when ready
    hooks: Hooks | None = None  # the configuration's [hooks] (paicli/policy/hooks.py); None: none configured
    _builtin: ToolBox | None = field(default=None, repr=False)  # `tools` without MCP tools
    last_map: PlannerMap | None = None  # the repository map of the latest plan session
    listings: ListingMemo = field(default_factory=ListingMemo, repr=False)  # grep_code's, for the session
    watched: WatchedListings = field(default_factory=lambda: _watched_listings(), repr=False)  # the map's
    map_warmup: MapWarmup | None = field(default=None, repr=False)  # the index updated while the user types

    @property
    def workspace(self) -> Path:
        return self.settings.workspace

    def secrets(self) -> list[str]:
        """Computed once: the environment and the key do not change during a session."""
        if self._secrets is None:
            self._secrets = secret_values(self.settings)
        return self._secrets

    def tool_context(
        self, task_id: str | None = None, scope: TaskScope | None = None, *, sink: EventSink | None = None
    ) -> ToolContext:
        return ToolContext(
            workspace=self.workspace,
            task_id=task_id,
            locks=self.locks,
            approve=self.approve,
            secrets=self.secrets(),
            command_timeout=self.settings.command_timeout,
            scope=scope,
            sandbox=self.sandbox.sandbox,
            sink=sink,
            folders=self.sandbox.memos,
            listings=self.listings,
        )

    def start_mcp(self) -> None:
        """Creates and starts the configured MCP servers, once; returns at once (they start in the
        background). paicli/mcp is loaded only here: without servers, or before this, none of it is."""
        if self.mcp is None and self.settings.mcp_servers:
            from paicli.mcp.manager import McpManager

            self.mcp = McpManager(
                self.settings.mcp_servers, workspace=self.workspace, env=os.environ, on_change=self.refresh_tools
            )
        if self.mcp is not None and not self.mcp.started:
            self.mcp.start()

    def refresh_tools(self) -> None:
        """`tools` becomes the built-in tools plus the MCP tools ready now. A new box: a turn or a plan that
        holds the old one keeps its tool set (and its schemas, byte for byte)."""
        if self._builtin is None:
            self._builtin = self.tools
        extra = self.mcp.tools() if self.mcp is not None else []
        self.tools = self._builtin.with_tools(extra) if extra else self._builtin

    def contract(self, tools: ToolBox | None = None) -> Contract:
        """The plan contract of this workspace and tool box (paicli/plan/contract.py)."""
        from paicli.plan.contract import Contract

        return Contract(self.workspace, (tools or self.tools).tool)

    def estimator(self, tools: ToolBox | None = None) -> Estimator:
        """What a plan will cost (paicli/plan/estimate.py), from this session's prompts and tool schemas."""
        from paicli.plan.calibration import factor_of
        from paicli.plan.estimate import Estimator
        from paicli.plan.routing import model_for_reviewer, model_for_summarizer, model_for_task

        fixed = len(self.system_prompt("executor")) + len(json.dumps((tools or self.tools).specs()))
        s = self.settings
        return Estimator(
            fixed_tokens=fixed // 4,
            closing_fixed_tokens=len(self.system_prompt("summarizer")) // 4,
            review=s.review,
            workspace=self.workspace,
            route=lambda task_type: model_for_task(s, task_type),
            summarizer_model=model_for_summarizer(s),
            reviewer_model=model_for_reviewer(s),
            prices=s.prices,
            factor=lambda model, kind: factor_of(self.llm.capabilities.samples(kind, model)),
        )

    def planner_map(self, sink: EventSink) -> PlannerMap:
        """The repository map the planner's requests carry (paicli/repomap); the latest one's share of its
        request stays on `last_map` for the review screen."""
        from paicli.repomap.files import watched_files
        from paicli.repomap.repo_map import PlannerMap, RepoMap

        lister = watched_files(self.watched)
        repo_map = RepoMap(self.workspace, self.home, sink, lister=lister, map_tokens=self.settings.map_tokens)
        ready = self.map_warmup.wait if self.map_warmup is not None else None
        self.last_map = PlannerMap(repo_map, sink, ready=ready)
        return self.last_map

    def warm_map(self) -> None:
        """Brings the repository index up to date in the background (paicli/repomap/warmup.py), once per
        session, unless the map is off (`map_tokens` 0)."""
        if self.settings.map_tokens <= 0:
            return
        if self.map_warmup is None:
            from paicli.repomap.warmup import MapWarmup

            self.map_warmup = MapWarmup(self.workspace, self.home, self.watched)
        self.map_warmup.start()

    def system_prompt(self, mode: str | None) -> str:
        return system_prompt(mode, self.workspace, self.home)

    def compressor(self, llm: ChatModel | None = None) -> Compressor:
        return Compressor(
            llm or self.llm,
            budget_tokens=self.settings.context_tokens,
            prompt=self._compressor_prompt(),
        )

    def _compressor_prompt(self) -> str:
        if self._compressor_text is None:
            self._compressor_text = load_prompt("modes/compressor.md", self.workspace, self.home)
        return self._compressor_text

    def react(
        self,
        sink: EventSink,
        *,
        llm: ChatModel | None = None,
        task_id: str | None = None,
        scope: TaskScope | None = None,
        answer_on_budget: bool = True,
        tools: ToolBox | None = None,
    ) -> ReactLoop:
        """A loop over `tools` (a plan's own set), else the tools available now."""
        model = llm or self.llm
        return ReactLoop(
            llm=model,
            tools=tools or self.tools,
            ctx=self.tool_context(task_id, scope, sink=sink),
            sink=sink,
            max_steps=self.settings.max_steps,
            answer_on_budget=answer_on_budget,
            before_request=self.compressor(model),
        )

    async def aclose(self) -> None:
        """Stops the MCP servers (no process outlives paicli) and closes the model client."""
        self.watched.close()
        try:
            if self.mcp is not None:
                await self.mcp.aclose()
        finally:
            await self.llm.aclose()


def _watched_listings() -> WatchedListings:
    from paicli.tools.watched_listing import WatchedListings  # with the first plan, not at start-up

    return WatchedListings()


def build_runtime(
    settings: Settings, sink: EventSink, *, announce: bool = True, sandbox: SandboxChoice | None = None
) -> Runtime:
    """The runtime of one process; the REPL sets `approve` afterwards (headless has nobody to ask).
    `announce`: emit the notice of a sandbox that is not used (the REPL shows it in its banner instead).
    `sandbox`: already chosen (the REPL chooses it for its banner), else chosen here."""
    s = settings
    home = user_home()
    llm = LLMClient(
        base_url=s.base_url,
        api_key=s.require_key(),
        model=s.model,
        temperature=s.temperature,
        max_tokens=s.max_tokens,
        connect_timeout=s.connect_timeout,
        read_timeout=s.read_timeout,
        max_attempts=s.max_attempts,
        backoff_base=s.retry_backoff,
        endpoint=Endpoint(
            max_in_flight=s.max_parallel,
            backoff=Backoff(base=s.retry_backoff),
            shared=SharedClosure.from_environ(os.environ, s.base_url),
        ),
        rate_limit_wait=s.rate_limit_wait,
        sink=sink,
        store=capability_store(home),
        headers=dict(s.preset.headers) if s.preset is not None else None,
    )
    sandbox = sandbox or build_sandbox(s, home)
    if announce and sandbox.notice is not None:
        sink.emit(Notice(level="warning", message=sandbox.notice))
    servers = [name for name, server in s.mcp_servers.items() if server.enabled]
    if servers and not sdk.installed():  # each server fails with this too (in /mcp): said once here
        sink.emit(
            Notice(
                level="warning", message=f"MCP servers are configured ({', '.join(servers)}), but {sdk.NOT_INSTALLED}"
            )
        )
    policy = build_policy(s, home, sandbox.memos)
    tools = ToolBox.default(gate=policy, mark_data=True)
    if policy.hooks:
        tools.after_call(policy.hooks.after_call)
    return Runtime(
        settings=s, sink=sink, llm=llm, tools=tools, home=home, policy=policy, sandbox=sandbox, hooks=policy.hooks
    )


def build_sandbox(settings: Settings, home: Path) -> SandboxChoice:
    """What contains the session's commands (paicli/sandbox/choose.py); ConfigError for `--sandbox bwrap`
    when bubblewrap cannot run."""
    s = settings
    return choose_sandbox(
        s.sandbox,
        workspace=s.workspace,
        home=home,
        network=s.sandbox_network,
        writable=s.sandbox_writable,
        hide=s.sandbox_hide,
        secrets=secret_values(s),
    )


def capability_store(home: Path) -> CapabilityStore:
    """Where what servers do not support is remembered across runs (`paicli doctor --refresh` clears it)."""
    return CapabilityStore(home / ".paicli" / CAPABILITIES_FILE)


def build_policy(settings: Settings, home: Path, memos: FolderMemos | None = None) -> ApprovalPolicy:
    """The approval policy of a session: mode and rules from the settings, auditing to ~/.paicli/audit/."""
    audit = AuditLog(audit_folder(home), secrets=secret_values(settings), workspace=settings.workspace)
    rules = Rules(settings.allow, settings.deny, workspace=settings.workspace)
    hooks = Hooks(settings.hooks, audit=audit) if settings.hooks else None
    return ApprovalPolicy(
        settings.workspace,
        mode=settings.approval,
        rules=rules,
        audit=audit,
        unsandboxed=settings.unsandboxed,
        hooks=hooks,
        folders=memos.git if memos is not None else None,
    )
