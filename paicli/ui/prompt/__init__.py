"""The prompt and the keyboard: the prompt line and its toolbar, history, `@` mentions and their
completion, the keys while a turn runs, approval and trust questions, the bell when a plan needs the user.
May import paicli/ui/chat; never the plan screens, the slash commands or the REPL."""
