"""Text tables."""


def _text(value) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def table(rows, columns) -> str:
    cells = [[_text(row[c]) for c in columns] for row in rows]
    numeric = [bool(rows) and all(isinstance(row[c], (int, float)) for row in rows) for c in columns]
    widths = [max([len(c)] + [len(line[i]) for line in cells]) for i, c in enumerate(columns)]

    def fit(value, width, right):
        return value.rjust(width) if right else value.ljust(width)

    lines = ["  ".join(fit(c, w, r) for c, w, r in zip(columns, widths, numeric)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(fit(v, w, r) for v, w, r in zip(line, widths, numeric)).rstrip() for line in cells]
    return "\n".join(lines)
