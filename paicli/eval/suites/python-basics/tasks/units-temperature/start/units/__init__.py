"""Unit conversion."""
