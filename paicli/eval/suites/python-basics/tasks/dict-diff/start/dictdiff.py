"""Differences between nested dicts: to be written."""
