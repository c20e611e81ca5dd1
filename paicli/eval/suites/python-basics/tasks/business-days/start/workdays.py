"""Business-day arithmetic: to be written."""
