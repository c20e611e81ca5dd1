"""The interactive front end: REPL, rendering, review screen, live view, approval prompt.

May import: paicli.app and everything below it. Never paicli.headless (front ends share paicli.app).
Renders events only; the core never prints.
"""
