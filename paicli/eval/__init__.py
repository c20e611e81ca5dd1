"""`paicli eval`: run a suite of coding tasks through plan and chat mode and report what each cost (issue 34)."""
