import pytest

from semver import Version

ORDER = [
    "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
    "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "1.10.0", "2.0.0",
]


def test_precedence():
    versions = [Version.parse(t) for t in ORDER]
    assert sorted(reversed(versions)) == versions
    assert all(a < b for a, b in zip(versions, versions[1:]))
    assert Version.parse("1.2.3") > Version.parse("1.2.3-rc.1")


def test_build_is_ignored():
    a, b = Version.parse("1.0.0+build.1"), Version.parse("1.0.0+exp.sha.5114f85")
    assert a == b and hash(a) == hash(b) and not a < b


def test_text_round_trips():
    for text in ORDER + ["1.0.0-x-y.7+z.1"]:
        assert str(Version.parse(text)) == text


@pytest.mark.parametrize("text", ["1.0", "01.0.0", "1.0.0-", "1.0.0-01", "1.0.0+", "a.b.c", "1.0.0-al$pha", " 1.0.0", "1.0.0-a..b"])
def test_invalid(text):
    with pytest.raises(ValueError):
        Version.parse(text)
