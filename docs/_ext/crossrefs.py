"""Griffe extension of the docs build: lampy names in docstrings become links.

Docstrings name a lampy object by its full public path in double backticks, such as
``lampy.optim.Adam`` or ``lampy.nn.Module.state_dict``, which reads as plain code in
``help()``. When mkdocstrings renders the docstring, this extension turns each such name
into the autorefs cross-reference [`lampy.optim.Adam`][lampy.optim.Adam], so the site
links it, and ``mkdocs build --strict`` fails on a name that is not documented.

A name is linked when it is a dotted path starting with ``lampy.`` whose parts are all
public (no leading underscore), alone between its backticks (``lampy.save(path, m)`` or
``lampy._memory`` stay code). Wired in mkdocs.yml under the python handler's
``extensions``.
"""

from __future__ import annotations

import re
from typing import Any

try:
    from griffe import Extension
except ImportError:  # the test suite (dev extra, no griffe) imports only link_names
    Extension = object  # type: ignore[misc,assignment]

NAME = re.compile(r"(?<![`\w\[])(``?)(lampy(?:\.[A-Za-z]\w*)+)\1(?![`\w\]])")


def link_names(text: str) -> str:
    """``text`` with each backticked public lampy path made an autorefs link."""
    return NAME.sub(lambda m: f"[`{m[2]}`][{m[2]}]", text)


class LampyCrossrefs(Extension):
    """Rewrites the docstring of every object griffe loads."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = link_names(obj.docstring.value)
