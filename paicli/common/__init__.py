"""The bottom layer: what every other part of paicli shares and nothing of paicli's own is below.

errors.py        the one error tree, mapped to exit codes
kinds.py         the kinds and states of tasks and plans
values.py        value types every layer passes around (token usage, retries, the plan estimate)
events.py        the typed events the core emits and the sink they go to
sanitize.py      the one sanitizer for untrusted text on its way to a terminal
shown.py         untrusted text shown whole: commands, write sets, trust fields (never cut)
wording.py       how a count is worded for people (`1 line`, `2 lines`)
wrap.py          text laid out by terminal cells: wrapped at spaces, or cut to one row with …
atomic_write.py  the one way a file is replaced: whole or not at all

May import: the standard library and pydantic only; never another part of paicli. The console script
(paicli/process_exit.py) imports errors.py before the secret hand-off restart, so this package's import
stays this docstring.
"""
