"""scipy, imported when first needed: ``lampy.special``, ``lampy.stats``, ``lampy.signal``
and the scipy-backed functions of ``lampy.linalg`` compute their values with it.

scipy is optional (the ``lampy[scipy]`` extra): ``import lampy`` never imports it, and a
function that needs it without it raises ``lampy.MissingExtraError`` naming the extra.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from lampy._errors import missing_extra


def scipy_module(name: str, what: str) -> ModuleType:
    """The scipy submodule ``name`` (``"scipy.special"``...), imported on first use.

    Raises:
        MissingExtraError: scipy is not installed; the message names ``what`` (the lampy
            function asking) and ``pip install "lampy[scipy]"``.
    """
    try:
        return importlib.import_module(name)
    except ImportError:
        raise missing_extra(what, "scipy", "scipy") from None
