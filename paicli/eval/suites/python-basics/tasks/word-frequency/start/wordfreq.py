"""Word frequencies: to be written."""
