"""The ReAct loop for chat and plan tasks, prompt assembly, conversation repair and compression.

May import: paicli.policy, paicli.tools, paicli.llm, paicli.common. Never plan or above.
"""
