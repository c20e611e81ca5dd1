from slug import slugify, unique_slug


def test_basic():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  Crème Brûlée  ") == "creme-brulee"
    assert slugify("C++ & Python 3.12") == "c-python-3-12"
    assert slugify("--a--b--") == "a-b"
    assert slugify("日本語") == "n-a"
    assert slugify("Über 日本 café") == "uber-cafe"


def test_max_length():
    assert slugify("the quick brown fox", max_length=12) == "the-quick"
    assert slugify("the quick brown fox", max_length=9) == "the-quick"
    assert slugify("the quick brown fox", max_length=8) == "the"
    assert slugify("extraordinarily", max_length=5) == "extra"
    assert slugify("short", max_length=50) == "short"


def test_unique():
    assert unique_slug("My Post", set()) == "my-post"
    assert unique_slug("My Post", {"my-post"}) == "my-post-2"
    assert unique_slug("My Post", {"my-post", "my-post-2", "my-post-3"}) == "my-post-4"
