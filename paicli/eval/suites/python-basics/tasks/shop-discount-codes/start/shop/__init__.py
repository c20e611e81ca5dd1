"""A small shop."""
