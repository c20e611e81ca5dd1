"""Run-length encoding: to be written."""
