"""paicli: a plan-then-execute coding agent for the terminal."""

import sys

__version__ = "0.1.0"

# httpx's package imports its own command-line tool whenever click is installed (and mcp installs it through
# uvicorn): click, pygments and rich's syntax and progress modules, ~50 ms of every start for a `main` paicli
# never calls. A None entry makes that import fail, which httpx expects and answers with a stub.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None: the import system's "blocked"
