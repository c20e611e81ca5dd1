"""The application layer: what both front ends (the REPL in paicli.ui, headless mode in paicli.headless)
share. It drives a chat turn or a plan as a task that a cancel source can stop, and returns an outcome
with its exit code; it loads the plan a command asks for; it writes events as JSON lines.

May import: the core (plan, agent, policy, tools, llm), runtime, config, paicli.common.
Must not import: paicli.ui or paicli.headless (front ends import the app, never each other).
"""
