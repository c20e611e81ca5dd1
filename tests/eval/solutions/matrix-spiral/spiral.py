"""Spiral walks over matrices."""


def _cells(rows: int, cols: int):
    top, bottom, left, right = 0, rows - 1, 0, cols - 1
    while top <= bottom and left <= right:
        for c in range(left, right + 1):
            yield top, c
        for r in range(top + 1, bottom + 1):
            yield r, right
        if top < bottom:
            for c in range(right - 1, left - 1, -1):
                yield bottom, c
        if left < right:
            for r in range(bottom - 1, top, -1):
                yield r, left
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1


def spiral_order(matrix: list[list[int]]) -> list[int]:
    if not matrix or not matrix[0]:
        if any(matrix):
            raise ValueError("rows of different lengths")
        return []
    cols = len(matrix[0])
    if any(len(row) != cols for row in matrix):
        raise ValueError("rows of different lengths")
    return [matrix[r][c] for r, c in _cells(len(matrix), cols)]


def spiral_matrix(rows: int, cols: int) -> list[list[int]]:
    matrix = [[0] * cols for _ in range(rows)]
    for n, (r, c) in enumerate(_cells(rows, cols), start=1):
        matrix[r][c] = n
    return matrix
