"""How a command is contained: the `Sandbox` seam (containment.py), bubblewrap (bwrap.py), the choice made at
start-up (choose.py), starting a command and starting it once more when bubblewrap failed to set it up
(launch.py) and telling a failure caused by the sandbox (blocked.py).

Layer: below tools (execute_command wraps its `bash -c` with it); imports only errors.
"""

from paicli.sandbox.blocked import blocked_by_sandbox, write_refused
from paicli.sandbox.bwrap import BwrapSandbox
from paicli.sandbox.choose import SANDBOX_MODES, SandboxChoice, SandboxMode, choose_sandbox
from paicli.sandbox.containment import Containment, Sandbox

__all__ = [
    "SANDBOX_MODES",
    "BwrapSandbox",
    "Containment",
    "Sandbox",
    "SandboxChoice",
    "SandboxMode",
    "blocked_by_sandbox",
    "choose_sandbox",
    "write_refused",
]
