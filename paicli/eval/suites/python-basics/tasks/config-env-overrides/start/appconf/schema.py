"""The fields of the configuration: section -> key -> (type, default)."""

FIELDS = {
    "server": {"host": (str, "127.0.0.1"), "port": (int, 8080), "debug": (bool, False)},
    "storage": {"path": (str, "data"), "max_mb": (int, 100)},
}
