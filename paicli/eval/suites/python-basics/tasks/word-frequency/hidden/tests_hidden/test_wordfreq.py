from wordfreq import top_words


def test_counts_and_order():
    text = "The cat and the hat. THE END, and the cat!"
    assert top_words(text, 3) == [("the", 4), ("and", 2), ("cat", 2)]


def test_apostrophes():
    text = "Don't stop; 'quoted' words aren't 'tricky' -- don't."
    assert top_words(text, 2) == [("don't", 2), ("aren't", 1)]
    assert ("quoted", 1) in top_words(text, 10)


def test_separators_and_alphabets():
    assert top_words("a1b2c a_b", 10) == [("a", 2), ("b", 2), ("c", 1)]
    assert top_words("Über über ÜBER straße", 1) == [("über", 3)]


def test_stop_words_and_limits():
    assert top_words("the cat the dog", 5, stop_words={"THE"}) == [("cat", 1), ("dog", 1)]
    assert top_words("x y z", 0) == [] and top_words("", 3) == []
