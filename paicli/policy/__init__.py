"""The approval policy: which tool calls run, which need a yes, which are refused.

classify.py  what a shell command does, as far as approvals care (safe / ask / opaque / deny): a visitor
             over the one parsed tree of paicli.shell
risk.py      Risk, Finding, Classification
always_prefix.py  what the "always" answer to a command covers (`git commit`, `pytest`, or the exact text)
checks.py    per-program checks of the classifier (readers, printf, test, cd, sed, jq)
readers.py   the read-only programs, option by option (unsafe, file-naming, name-list options)
find.py      find's primaries; git_reader.py: git, read-only only in the workspace's own repository
paths.py     where path arguments lead (globs expanded, symlinks resolved, /proc /sys /dev refused)
external_scope.py  the plan contract for tools outside paicli's view (MCP): the workspace paths they name
rules.py     allow and deny rules from the configuration (deny wins)
approval.py  ApprovalPolicy: mode + rules + session grants → a ruling per tool call, audited
assess.py    what a call is before mode, rules and grants (safe, or what it needs and what "always" keeps)
ruling.py    the modes, decisions, rulings and questions the policy speaks in, and the refusals' sentences

May import: paicli.tools, paicli.llm, paicli.common. Never agent, plan or above.
"""
