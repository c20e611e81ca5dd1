class ConfigError(Exception):
    """A configuration that cannot be used; the message says where and why."""
