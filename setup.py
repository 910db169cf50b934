"""The optional compiled rules core; everything else about the package is in pyproject.toml.

``GUTI_COMPILE=1 pip install .`` compiles the modules listed in
build_support/guti_build.py with mypyc (same source, same behaviour, run as C); without it
the package is pure Python. See the README's "Faster: the compiled rules core".
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "build_support"))
from guti_build import COMPILED_MODULES, compiling  # noqa: E402


def _extensions() -> list[Extension]:
    if not compiling():
        return []
    from mypyc.build import mypycify

    return list(mypycify(list(COMPILED_MODULES), opt_level="3"))


setup(ext_modules=_extensions())
