from paicli.process_exit import entry

entry()
