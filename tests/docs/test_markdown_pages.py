"""Every Python block of the docs and the README runs as a reader would paste it, and
prints what the page shows (conventions in tests/docs/markdown.py)."""

from __future__ import annotations

import doctest
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.markdown import Step, blocks, steps

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("page_runner.py")
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
RUN_PAGES = [p for p in PAGES if steps(p)]

# Pages whose code needs an optional extra: skipped, with the install line, without it.
PAGES_NEEDING = {
    "docs/distributed.md": ("mpi4py", 'pip install -e ".[dev,mpi]"'),
    "docs/design/array-backends.md": ("array_api_strict", 'pip install -e ".[dev]"'),
}

# Excerpts (```python notest) are shown but not run; keep them rare.
MAX_EXCERPTS = 4

OUTPUT_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def run_page(page: Path, plan: list[Step], cwd: Path, timeout: float = 540) -> dict:
    """Run the steps of ``page`` in a fresh interpreter in ``cwd``; the runner's result."""
    plan_file, result_file = cwd / ".plan.json", cwd / ".result.json"
    rel = str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else str(page)
    plan_file.write_text(
        json.dumps(
            {
                "page": rel,
                "blocks": [
                    {"line": s.block.line, "code": s.block.code, "title": s.block.title}
                    for s in plan
                ],
            }
        )
    )
    env = {
        **os.environ,
        "PYTHONWARNINGS": "error",
        "MPLBACKEND": "Agg",  # a page that plots writes files instead of opening windows
        "OPENBLAS_NUM_THREADS": "1",
    }
    proc = subprocess.run(
        [sys.executable, str(RUNNER), str(plan_file), str(result_file)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0 and result_file.exists(), proc.stderr
    result: dict = json.loads(result_file.read_text())
    result["stderr"] = proc.stderr
    return result


def mismatches(plan: list[Step], outputs: list[str], rel: str) -> list[str]:
    """A message for each step whose output differs from the text shown after it."""
    checker = doctest.OutputChecker()
    bad = []
    for step, got in zip(plan, outputs, strict=False):
        if step.expected is not None and not checker.check_output(step.expected, got, OUTPUT_FLAGS):
            bad.append(
                f"{rel}:{step.block.line}: the block prints\n{got}\nbut the page shows\n"
                f"{step.expected}"
            )
    return bad


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_runs_and_prints_what_it_shows(page: Path, tmp_path: Path) -> None:
    """The page's Python blocks run in order in one fresh interpreter without an error or
    a warning, and each prints the output shown after it."""
    plan = steps(page)
    rel = str(page.relative_to(ROOT))
    needs = PAGES_NEEDING.get(rel)
    if needs is not None and importlib.util.find_spec(needs[0]) is None:
        pytest.skip(f"{rel} needs {needs[0]}: {needs[1]}")
    result = run_page(page, plan, tmp_path)
    error = result["error"]
    assert error is None, f"{rel}: the block at line {error['line']} failed:\n{error['traceback']}"
    problems = mismatches(plan, result["outputs"], rel)
    assert not problems, "\n\n".join(problems)


def test_excerpts_stay_rare() -> None:
    """Few blocks are excluded from running, each marked ```python notest."""
    excerpts = [
        f"{p.relative_to(ROOT)}:{b.line}"
        for p in PAGES
        for b in blocks(p.read_text(encoding="utf-8"))
        if b.is_python and b.notest
    ]
    assert len(excerpts) <= MAX_EXCERPTS, excerpts


def test_pages_have_blocks_to_run() -> None:
    """The collector finds the pages with code: the guides, the tutorials, the README."""
    names = {str(p.relative_to(ROOT)) for p in RUN_PAGES}
    assert {"README.md", "docs/getting-started.md", "docs/coming-from-pytorch.md"} <= names


# ----------------------------------------------------------------- the runner itself
def test_runner_reports_the_failing_block_with_its_page_line(tmp_path: Path) -> None:
    """A block that raises stops the page and is reported with the page's line number;
    the blocks before it ran in the same namespace."""
    page = tmp_path / "page.md"
    page.write_text(
        "# t\n\n```python\nx = 2\nprint(x)\n```\n\n```text\n2\n```\n\n"
        "```python\ny = x + 1\nraise KeyError('boom')\n```\n\n```python\nprint('never')\n```\n"
    )
    plan = steps(page)
    result = run_page(page, plan, tmp_path)
    assert result["outputs"] == ["2\n", ""]
    assert result["error"]["line"] == 13
    assert "KeyError: 'boom'" in result["error"]["traceback"]
    assert "line 14" in result["error"]["traceback"]


def test_runner_flags_output_that_differs(tmp_path: Path) -> None:
    """Output differing from the shown text is a mismatch; ``...`` matches anything."""
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nprint('a', 1)\n```\n```text\na 2\n```\n"
        "```python\nprint('took 0.31 s')\n```\n```text\ntook ... s\n```\n"
    )
    plan = steps(page)
    result = run_page(page, plan, tmp_path)
    problems = mismatches(plan, result["outputs"], "page.md")
    assert len(problems) == 1 and "page.md:2" in problems[0]


def test_runner_saves_titled_blocks_and_runs_their_tests(tmp_path: Path) -> None:
    """A ``title="x.py"`` block is saved for later blocks to import; a failing
    ``test_*.py`` block fails the page."""
    page = tmp_path / "page.md"
    page.write_text(
        '```python title="helper.py"\nVALUE = 3\n```\n'
        "```python\nfrom helper import VALUE\nprint(VALUE)\n```\n```text\n3\n```\n"
        '```python title="test_helper.py"\ndef test_it():\n    assert 1 == 2\n```\n'
    )
    result = run_page(page, steps(page), tmp_path)
    assert result["outputs"][:2] == ["", "3\n"]
    assert (
        result["error"]["line"] == 12
        and "pytest test_helper.py failed" in (result["error"]["traceback"])
    )


def test_markdown_blocks_and_markers() -> None:
    """The parser finds indented fences, notest markers, titles and shown outputs."""
    text = (
        "1. step\n\n    ```python\n    a = 1\n    ```\n\n"
        "```python notest\nexcerpt(...)\n```\n"
        '```py title="m.py"\nX = 1\n```\n'
        "```python\nprint(1)\n```\n\nsome words\n\n```text\n1\n```\n"
    )
    found = blocks(text)
    assert [b.lang for b in found] == ["python", "python", "py", "python", "text"]
    assert found[0].code == "a = 1\n" and found[0].line == 4
    assert found[1].notest and not found[0].notest
    assert found[2].title == "m.py"
    with pytest.raises(ValueError, match="never closed"):
        blocks("```python\nx = 1\n")


def test_docs_build_drops_notest_markers_before_rendering() -> None:
    """The mkdocs hook removes ``notest`` from fence info strings (a bare word there
    would stop the fence from rendering) and leaves everything else as it was."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("hooks", ROOT / "docs/_ext/hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = (
        "```python notest\nx\n```\n"
        '  ```py notest title="a.py"\ny\n  ```\n'
        "```python\nnotest = 1\n```\n"
        "a python notest in prose\n"
    )
    assert hooks.on_page_markdown(page) == (
        "```python\nx\n```\n"
        '  ```py title="a.py"\ny\n  ```\n'
        "```python\nnotest = 1\n```\n"
        "a python notest in prose\n"
    )


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """.ci/run runs the README's install-and-test command, character for character, so
    the command a newcomer pastes is the one CI proves."""
    readme = [b.code.strip() for b in blocks((ROOT / "README.md").read_text()) if b.lang == "bash"]
    test_commands = [c for c in readme if "pip install -e '.[dev" in c and "pytest" in c]
    assert len(test_commands) == 1, test_commands
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_commands[0] in ci_lines
