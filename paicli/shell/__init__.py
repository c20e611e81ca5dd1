"""Reading shell commands: one parse with the tree-sitter bash grammar, walked by visitors.

syntax.py   the typed tree (scripts, pipelines, simple and compound commands, words and their parts)
parse.py    parse_script(text): the grammar's tree turned into that shape, cached by text
build.py    statements, pipelines, redirections and simple commands from the grammar's nodes
compounds.py compound commands (groups, `if`, loops, `case`, functions, tests) from the grammar's nodes
keywords.py reserved words, where the grammar and bash read them differently
words.py    words, quotes, expansions, substitutions and here-document bodies from the grammar's nodes
lexical.py  bash's character rules the grammar leaves to its user (quote removal, backslashes)
walk.py     the visitor walk over a script, nested code included (`bash -c`, `eval`, `find -exec`, ...)
programs.py what paicli knows about programs that run other programs or code
builtins.py bash's builtins and keywords, and which of them run code
wrappers.py programs that run the command after their options (`env`, `timeout 5`, `xargs`, ...)
options.py  options and arguments through which a program runs a command line (`tar --to-command`, ...)
sed.py      the `e` commands of a sed script

This package imports nothing else of paicli: the tools layer (the hard denylist) and the policy layer
(the classifier, the rule matcher) both build on it.
"""
