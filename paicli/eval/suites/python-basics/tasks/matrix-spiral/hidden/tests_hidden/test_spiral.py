import pytest

from spiral import spiral_matrix, spiral_order


def test_order():
    assert spiral_order([[1, 2, 3], [4, 5, 6]]) == [1, 2, 3, 6, 5, 4]
    assert spiral_order([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == [1, 2, 3, 6, 9, 8, 7, 4, 5]
    assert spiral_order([[1], [2], [3]]) == [1, 2, 3]
    assert spiral_order([[7]]) == [7]
    assert spiral_order([]) == [] and spiral_order([[]]) == []


def test_ragged_refused():
    with pytest.raises(ValueError):
        spiral_order([[1, 2], [3]])


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (2, 2), (3, 4), (4, 3), (5, 1), (1, 5), (6, 6)])
def test_matrix_is_the_inverse(rows, cols):
    matrix = spiral_matrix(rows, cols)
    assert len(matrix) == rows and all(len(row) == cols for row in matrix)
    assert spiral_order(matrix) == list(range(1, rows * cols + 1))


def test_matrix_example():
    assert spiral_matrix(2, 2) == [[1, 2], [4, 3]]
