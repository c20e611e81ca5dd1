"""`paicli doctor [--json] [--refresh]`: what the configured endpoint and model can do, and what the
machine around them offers, as a table or as one JSON object
`{"base_url", "model", "checks": [{"name", "ok", "detail"}]}`.

Exit 0 when chat works, 1 when it does not, 2 for a configuration error (no key for an endpoint that
needs one: raised before anything is sent). `--refresh` first forgets what paicli remembered about
servers (~/.paicli/capabilities.json), so the probes' findings are all that is remembered after. The key
is never printed; a base URL is shown without any user:password part.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import TextIO

import httpx2

from paicli.app.servers import settle_servers
from paicli.common.errors import EXIT_FAILED, EXIT_OK, ConfigError
from paicli.common.events import NullSink
from paicli.common.sanitize import terminal_safe
from paicli.config import Settings, user_home
from paicli.llm.capabilities import Capabilities
from paicli.llm.capability_store import endpoint_key
from paicli.llm.probe import Check, Prober
from paicli.llm.tls import tls_for
from paicli.runtime import build_runtime, build_sandbox, capability_store, secret_values
from paicli.tools.output import mask_secrets

MAX_PROBE_SECONDS = 60.0
MARKS = {True: "✓", False: "✗", None: "·"}


def doctor_command(settings: Settings, *, json_mode: bool, refresh: bool, out: TextIO = sys.stdout) -> int:
    key = settings.require_key()  # ConfigError (exit 2) for a remote endpoint without a key
    store = capability_store(user_home())
    forgot = store.clear() if refresh else False
    capabilities = Capabilities(lambda: settings.model, base_url=settings.base_url, store=store)
    checks = asyncio.run(_probe(settings, key, capabilities)) + machine_checks(settings)
    if settings.mcp_servers:
        checks = [check for check in checks if check.name != "mcp"] + [asyncio.run(mcp_check(settings))]
    shown_url = endpoint_key(settings.base_url, "").strip()
    secrets = secret_values(settings)
    if json_mode:
        report = {"base_url": shown_url, "model": settings.model, "checks": [check.to_json() for check in checks]}
        out.write(mask_secrets(json.dumps(report, ensure_ascii=False), secrets) + "\n")
    else:
        lines = [f"paicli doctor · {shown_url} · {settings.model}"]
        width = max(len(check.name) for check in checks)
        lines += [f"  {MARKS[check.ok]} {check.name:<{width}}  {check.detail}" for check in checks]
        lines += remembered_lines(capabilities, settings.model, forgot)
        out.write("\n".join(terminal_safe(mask_secrets(line, secrets)) for line in lines) + "\n")
    chat = next(check for check in checks if check.name == "chat")
    return EXIT_OK if chat.ok else EXIT_FAILED


async def _probe(settings: Settings, key: str, capabilities: Capabilities) -> list[Check]:
    timeout = httpx2.Timeout(min(settings.read_timeout, MAX_PROBE_SECONDS), connect=settings.connect_timeout)
    headers = dict(settings.preset.headers) if settings.preset is not None else None
    async with httpx2.AsyncClient(timeout=timeout, verify=tls_for(settings.base_url)) as http:
        prober = Prober(
            http,
            base_url=settings.base_url,
            api_key=key,
            model=settings.model,
            capabilities=capabilities,
            headers=headers,
        )
        return await prober.run()


def machine_checks(settings: Settings) -> list[Check]:
    """What the machine around the model offers: the sandbox, and MCP servers (checked apart, see
    `mcp_check`, when some are configured)."""
    return [sandbox_check(settings), Check("mcp", None, "no MCP servers configured")]


def sandbox_check(settings: Settings) -> Check:
    """Whether commands would be contained, probed as a session would (paicli/sandbox/choose.py): ok,
    not ok with what to install or change, or not used (`sandbox = off`)."""
    if settings.sandbox == "off":
        return Check("sandbox", None, "sandbox = off: commands run as you, approvals are the only guard")
    try:
        choice = build_sandbox(settings, user_home())
    except ConfigError as error:
        return Check("sandbox", False, str(error))
    return Check("sandbox", choice.sandbox is not None, choice.describe())


async def mcp_check(settings: Settings) -> Check:
    """Starts the configured MCP servers, waits until none is starting, and says which are up."""
    runtime = build_runtime(settings, NullSink())
    try:
        await settle_servers(runtime, NullSink())
        views = runtime.mcp.views() if runtime.mcp is not None else []
    finally:
        await runtime.aclose()
    enabled = [view for view in views if view.status != "disabled"]
    if not enabled:
        return Check("mcp", None, "no MCP server is enabled")
    parts = [
        f"{view.name} ready ({view.tools} tools)"
        if view.status == "ready"
        else f"{view.name} {view.status}: {view.detail}"
        for view in enabled
    ]
    return Check("mcp", all(view.status == "ready" for view in enabled), "; ".join(parts))


def remembered_lines(capabilities: Capabilities, model: str, forgot: bool) -> list[str]:
    learned = capabilities.learned(model)
    lines = ["forgot what was remembered about servers (--refresh)"] if forgot else []
    if learned.rejected:
        age = f", learned {_age(time.time() - learned.updated)} ago" if learned.updated else ""
        names = ", ".join(sorted(name.replace(".", " ") for name in learned.rejected))
        lines.append(f"remembered for this server and model: not supported: {names}{age} (--refresh forgets it)")
    return lines


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{max(0, round(seconds))} s"
    if seconds < 7200:
        return f"{round(seconds / 60)} min"
    if seconds < 172_800:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86_400)} days"
