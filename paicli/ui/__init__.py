"""The interactive front end, by role: chat/ (rendering a turn), prompt/ (the prompt line, keys and
questions), plan/ (review screen, editor, live view), commands/ (the slash commands), and at the top
repl.py (the loop) and first_prompt.py (the prompt shown before the rest is imported). Each folder imports
only those before it in that list (tests/test_layers.py).

May import: paicli.app and everything below it. Never paicli.headless (front ends share paicli.app).
Renders events only; the core never prints.
"""
