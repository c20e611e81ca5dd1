"""A typed INI configuration."""
