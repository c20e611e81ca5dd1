"""Ordering items by their dependencies: to be written."""
