"""Durations as text: to be written."""
