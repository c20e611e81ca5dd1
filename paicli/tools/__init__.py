"""The tools the model calls (one per module), the workspace guard, atomic writes and the tool box.

May import: paicli.llm, paicli.common. Never policy, agent, plan or above.
"""
