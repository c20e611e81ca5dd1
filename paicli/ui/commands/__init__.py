"""The slash commands: the table (table.py) naming each handler as "module:function", the context a
handler sees (context.py), and one module a command family (`/plan`, `/undo`, `/mcp`, `/model`, ...).
May import the other folders of paicli/ui; the REPL (paicli/ui/repl.py) is the only thing above them."""
