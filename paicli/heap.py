"""The cyclic garbage collector and paicli's long-lived objects.

Once the runtime is built, nearly everything in memory lives as long as the process: modules, pydantic's
schemas and validators, the settings, the tool schemas. The collector's full passes would walk all of it
again and again, each a pause of milliseconds on the event loop at a moment nobody chose: those pauses were
the slowest dispatches of a plan (`python -m bench dispatch`, p99). `gc.freeze()` takes what exists at that
point out of the collector's sight; everything created afterwards is collected as before.
"""

from __future__ import annotations

import gc


def settle_long_lived() -> None:
    """Takes every object that exists now out of the cyclic collector's passes (they stay alive as long as
    they are referenced; freed by reference counting as before)."""
    gc.freeze()
