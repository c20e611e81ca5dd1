"""Semantic versions: to be written."""
