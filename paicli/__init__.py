"""paicli: a plan-then-execute coding agent for the terminal."""

__version__ = "0.1.0"
