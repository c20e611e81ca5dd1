"""The approval policy: which tool calls run, which need a yes, which are refused.

classify.py  what a shell command does, as far as approvals care (safe / ask / opaque / deny)
rules.py     allow and deny rules from the configuration (deny wins)
approval.py  ApprovalPolicy: mode + rules + session grants → a ruling per tool call, audited

May import: paicli.tools, paicli.llm, paicli.events, paicli.errors. Never agent, plan or above.
"""
