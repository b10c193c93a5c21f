"""The code blocks of a Markdown page, as the docs runner sees them.

Conventions (the same in every page under ``docs/`` and in ``README.md``):

- A fenced block whose info string starts with ``python`` or ``py`` is run. Blocks of
  one page run in order in one fresh interpreter, as a reader would paste them.
- ``python notest`` marks a deliberate excerpt (a fragment of lampy's source, a
  template with ``...`` in it): it is shown but not run. Keep these rare.
- ``python title="name.py"`` is a file the reader saves: the runner writes it to the
  page's working directory instead of running it (later blocks import it); a file named
  ``test_*.py`` is then run with pytest, as the page tells the reader to.
- A ``text`` block right after a run block (nothing but blank lines between) is that
  block's expected standard output, compared as doctest does with ``ELLIPSIS`` and
  ``NORMALIZE_WHITESPACE``: write ``...`` for a part that varies (timings, addresses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_TITLE = re.compile(r"""title=(["'])(?P<title>[^"']*)\1""")

NOTEST = "notest"


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    lang: str
    """The first word of the info string (``python``, ``text``, ``bash``...)."""
    info: str
    """The whole info string after the fence."""
    code: str
    """The block's text, its common indentation removed."""
    line: int
    """The 1-based line of the block's first code line in the page."""

    @property
    def is_python(self) -> bool:
        """Whether the block is Python source (``python`` or ``py``)."""
        return self.lang in ("python", "py", "python3", "pycon")

    @property
    def notest(self) -> bool:
        """Whether the block is marked as an excerpt that is not run."""
        return NOTEST in self.info.split()

    @property
    def title(self) -> str | None:
        """The file name given by ``title="..."``, if any."""
        m = _TITLE.search(self.info)
        return m.group("title") if m else None


@dataclass(frozen=True)
class Step:
    """A runnable block with the output shown after it, if any."""

    block: Block
    expected: str | None
    """The text of the ``text`` block right after it, or None."""


def blocks(text: str) -> list[Block]:
    """Every fenced block of a Markdown text, in order (fences nested in lists included).

    Raises:
        ValueError: for a fence that is never closed.
    """
    out: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        start = i + 1
        j = start
        while j < len(lines) and not re.match(
            rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", lines[j]
        ):
            j += 1
        if j == len(lines):
            raise ValueError(f"line {i + 1}: the fence {fence}{info} is never closed")
        body = [
            ln[len(indent) :] if ln.startswith(indent) else ln.lstrip() for ln in lines[start:j]
        ]
        lang = info.split()[0] if info.split() else ""
        out.append(Block(lang=lang, info=info, code="\n".join(body) + "\n", line=start + 1))
        i = j + 1
    return out


def steps(path: Path) -> list[Step]:
    """The runnable Python blocks of a page, each with the output shown after it."""
    text = path.read_text(encoding="utf-8")
    found = blocks(text)
    lines = text.splitlines()
    result: list[Step] = []
    for k, b in enumerate(found):
        if not b.is_python or b.notest:
            continue
        expected = None
        if k + 1 < len(found) and found[k + 1].lang == "text":
            nxt = found[k + 1]
            # The text block follows directly: only blank lines between the two fences.
            end_of_b = b.line - 1 + b.code.count("\n")  # 0-based index of b's closing fence
            between = lines[end_of_b + 1 : nxt.line - 2]
            if all(not ln.strip() for ln in between):
                expected = nxt.code
        result.append(Step(b, expected))
    return result
