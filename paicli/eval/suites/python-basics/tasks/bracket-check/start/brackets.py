"""Bracket checking: to be written."""
