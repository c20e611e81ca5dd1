"""Markdown helpers."""
