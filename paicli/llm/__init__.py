"""The OpenAI-compatible client: SSE streaming, tool-call fragments, usage, retries, cancellation.

May import: paicli.common. Nothing above it.
"""
