"""The repository map: what the planner is shown of the code for a goal (issue 30).

tags.py reads top-level symbols with tree-sitter, words.py splits text into the words ranking compares,
files.py lists the workspace (the lister seam) and reads a file safely, history.py reads which files change
together from git, index.py keeps each file's words and symbols (and that history) under ~/.paicli/index/,
rank.py ranks files for a goal (BM25, then the code's links and the history),
render.py writes the map within a token budget, repo_map.py puts them together.

May import paicli.common, paicli.llm (token estimates) and paicli.tools (the neutralised git environment,
confined reading, the workspace walk); nothing above it. Never prints: problems are Notice events.
"""
