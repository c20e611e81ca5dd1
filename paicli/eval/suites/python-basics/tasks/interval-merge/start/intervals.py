"""Interval arithmetic: to be written."""
