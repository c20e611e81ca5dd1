"""Slugs for titles."""


def slugify(title):
    return "-".join(title.lower().split())
