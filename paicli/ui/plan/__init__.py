"""Plan mode on a terminal: the review screen (Enter, `i`, `e`, ESC), the plan editor, the live task
table while the plan runs, and the runner that strings them together. May import paicli/ui/chat and
paicli/ui/prompt; never the slash commands or the REPL."""
