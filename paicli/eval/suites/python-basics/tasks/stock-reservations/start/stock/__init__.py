"""A warehouse, its orders and its reports."""
