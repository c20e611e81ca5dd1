"""Whether the MCP SDK is there: it is the extra `paicli[mcp]`, not a dependency of every install
(docs/dependencies.md: 17 of 37 packages and 27 MB of the install, for users who configure a server)."""

from __future__ import annotations

import importlib.util

NOT_INSTALLED = "the MCP SDK is not installed: pip install 'paicli[mcp]'"


def installed() -> bool:
    """Finds the package without importing it (the import takes most of a second)."""
    try:
        return importlib.util.find_spec("mcp") is not None
    except (ImportError, ValueError):
        return False


def missing(error: BaseException) -> bool:
    """Whether `error` is the SDK's import failing because the package is not there."""
    return isinstance(error, ModuleNotFoundError) and (error.name or "").partition(".")[0] == "mcp"
