"""The tools the model calls and what they share.

builtin/            the eight tools, one a module (read_file, write_file, edit_file, list_dir, glob_files,
                    grep_code, execute_command, fetch_url)
readable.py         a web page's readable content as Markdown (fetch_url's)
denylist.py         the hard denylist: commands refused in every mode
task_scope.py       what a plan task's type and write set let its tools touch
file_lister.py      the workspace's files as git shows them (the model's view, the checkpoint view)
git_listing.py      the lister's git calls (ls-files, check-ignore), one configuration look-up a tool run
grep_search.py, regex_syntax.py   grep_code's search (rg or in process, the same hits) and its RE2 syntax
grep_walk.py        grep_code's fast path: rg walks the folder while the lister lists it, the listing judges
glob_pattern.py     glob patterns as regular expressions
guard.py, beneath.py, confined.py   path checks: nothing leaves the workspace
toolbox.py          the tools a loop is given, by name

May import: paicli.llm, paicli.common. Never policy, agent, plan or above.
"""
