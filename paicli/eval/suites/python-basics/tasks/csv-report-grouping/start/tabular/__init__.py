"""Small CSV reports."""
