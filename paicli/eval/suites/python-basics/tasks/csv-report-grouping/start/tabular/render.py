"""Text tables."""


def table(rows, columns) -> str:
    cells = [[str(row[c]) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(line[i]) for line in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip() for line in cells]
    return "\n".join(lines)
