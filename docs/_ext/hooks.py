"""mkdocs hooks of the docs build (wired in mkdocs.yml under ``hooks``).

``python notest`` marks a block the docs runner of the test suite does not run (an
excerpt; see tests/docs/markdown.py). The marker is for the runner only: it is removed
here before the page is rendered, because a bare word in a fence's info string stops
pymdownx.superfences from recognising the fence at all.
"""

from __future__ import annotations

import re
from typing import Any

NOTEST = re.compile(r"^([ \t]*(?:`{3,}|~{3,})[ \t]*(?:python|py)\b)[ \t]+notest\b", re.M)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """The page's Markdown with the ``notest`` markers dropped from its fences."""
    return NOTEST.sub(r"\1", markdown)
