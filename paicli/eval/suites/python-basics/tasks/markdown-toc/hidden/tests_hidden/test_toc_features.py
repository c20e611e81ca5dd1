from mdtools.headings import headings
from mdtools.toc import toc

FENCED = """# Title

```python
# not a heading
```

````
```
## still code
````

~~~~
# code too
~~~
## code as well
~~~~

## Real
"""


def test_fenced_code_is_not_headings():
    assert headings(FENCED) == [(1, "Title"), (2, "Real")]


def test_repeated_anchors():
    doc = "## Usage\n## Usage\n### Usage\n## Other\n"
    assert toc(doc).splitlines() == [
        "- [Usage](#usage)",
        "- [Usage](#usage-1)",
        "  - [Usage](#usage-2)",
        "- [Other](#other)",
    ]


def test_max_level():
    doc = "# A\n## B\n### C\n## D\n"
    assert toc(doc, max_level=2).splitlines() == ["- [A](#a)", "  - [B](#b)", "  - [D](#d)"]
    assert toc(doc, max_level=1) == "- [A](#a)"
