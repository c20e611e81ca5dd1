"""Spiral walks over matrices: to be written."""
