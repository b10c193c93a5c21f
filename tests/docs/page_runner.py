"""Runs the blocks of one Markdown page in this fresh interpreter, as a reader would.

Usage: ``python page_runner.py PLAN.json RESULT.json``, in the page's working directory.
PLAN holds ``{"page": str, "blocks": [{"line", "code", "title"}]}``; RESULT receives
``{"outputs": [str, ...], "error": None | {"line", "traceback"}}``: the standard output
of each block that ran, and the first exception with its traceback (lines point into the
page). Blocks run in one namespace, like statements pasted one after the other.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import traceback
from pathlib import Path


def main(plan_path: str, result_path: str) -> int:
    plan = json.loads(Path(plan_path).read_text(encoding="utf-8"))
    page = plan["page"]
    # A reader's interpreter finds modules in the current directory (a saved file).
    sys.path.insert(0, str(Path.cwd()))
    namespace: dict[str, object] = {"__name__": "__main__"}
    outputs: list[str] = []
    error = None
    for block in plan["blocks"]:
        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer):
                if block["title"]:
                    _save(block, page)
                else:
                    # Leading newlines make tracebacks give the page's line numbers.
                    code = compile("\n" * (block["line"] - 1) + block["code"], page, "exec")
                    exec(code, namespace)
        except BaseException:  # report any failure, SystemExit included, then stop
            error = {"line": block["line"], "traceback": traceback.format_exc()}
        outputs.append(buffer.getvalue())
        if error:
            break
    Path(result_path).write_text(json.dumps({"outputs": outputs, "error": error}))
    return 0


def _save(block: dict[str, object], page: str) -> None:
    """Write a titled block to its file; run a test file with pytest as the page says."""
    title = str(block["title"])
    path = Path(title)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(block["code"]), encoding="utf-8")
    if path.name.startswith("test_"):
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "--hypothesis-seed=0", str(path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if result.returncode != 0:
            raise AssertionError(
                f"{page}:{block['line']}: pytest {title} failed:\n{result.stdout}{result.stderr}"
            )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
