"""Log summaries."""
