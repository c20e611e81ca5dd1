"""A small lending library."""
