"""The compiled core's build: everything else is declared in pyproject.toml.

``battleline.env.rules._kernel`` is a C++17 extension (pybind11) over the
sources in env/rules/native/. ``pip install .`` and ``pip install -e .`` build
it; an editable install puts it beside env/rules/kernel.py.
"""

from pybind11.setup_helpers import Pybind11Extension
from setuptools import setup

kernel = Pybind11Extension(
    "battleline.env.rules._kernel",
    ["env/rules/native/kernel.cpp", "env/rules/native/geometry.cpp",
     "env/rules/native/sight.cpp"],
    depends=["env/rules/native/geometry.hpp"],
    cxx_std=17,
    # No fused multiply-add: the core must round as the Python reference rounds.
    extra_compile_args=["-O2", "-ffp-contract=off"],
)

setup(ext_modules=[kernel])
