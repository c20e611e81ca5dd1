"""The OpenAI-compatible client: SSE streaming, tool-call fragments, usage, retries, cancellation.

May import: paicli.errors, paicli.events. Nothing above it.
"""
