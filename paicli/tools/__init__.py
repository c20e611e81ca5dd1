"""The tools the model calls and what they share.

builtin/            the seven tools, one a module (read_file, write_file, edit_file, list_dir, glob_files,
                    grep_code, execute_command)
denylist.py         the hard denylist: commands refused in every mode
task_scope.py       what a plan task's type and write set let its tools touch
workspace_walk.py   walking the workspace the way every listing tool does
guard.py, beneath.py, confined.py   path checks: nothing leaves the workspace
toolbox.py          the tools a loop is given, by name

May import: paicli.llm, paicli.common. Never policy, agent, plan or above.
"""
