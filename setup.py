"""Build of the optional C++ extensions ``dnb_env._native`` and ``dnb_env._native_wide``; everything else is in
pyproject.toml.

The extensions (sources in ``dnb_env/csrc``; ``_native_wide`` is the same code for boards of 10x10 to 12x12,
``dnb_env/csrc/wide``, left out with ``DNB_BUILD_WIDE=0``) are compiled with ``-O3 -std=c++17`` and no
``-march``, so a wheel runs on any CPU of its platform. It is optional: without a C++17 compiler (or without pybind11 in the
build environment) the install still succeeds, ``dnb_env.native.available()`` is False and everything runs
on the pure-Python engine.
"""

from __future__ import annotations

import glob
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

FLAGS = {
    "msvc": ["/O2", "/std:c++17", "/EHsc"],
    "unix": ["-O3", "-std=c++17", "-fvisibility=hidden", "-g0"],
}


class BuildExt(build_ext):
    """Compiler flags by compiler family (MSVC or GCC/Clang)."""

    def build_extensions(self):
        flags = FLAGS.get(self.compiler.compiler_type, FLAGS["unix"])
        for ext in self.extensions:
            ext.extra_compile_args = list(flags)
        super().build_extensions()


def extensions() -> list[Extension]:
    try:
        import pybind11
    except ImportError:
        print("dnb: pybind11 is not installed, building without the C++ extension dnb_env._native",
              file=sys.stderr)
        return []
    sources = ["module.cpp", "solver_module.cpp", "search_module.cpp", "env_module.cpp"]
    depends = sorted(glob.glob("dnb_env/csrc/*.hpp") + glob.glob("dnb_env/csrc/wide/*.hpp"))
    return [
        Extension(
            name,
            sources=[f"dnb_env/csrc/{folder}{s}" for s in sources],
            depends=depends,
            include_dirs=[pybind11.get_include()],
            language="c++",
            optional=True,  # a failed compile warns and installs the pure-Python package
        )
        # boards up to 9x9 in compact records; the same sources for boards up to 12x12 (csrc/wide), unless
        # DNB_BUILD_WIDE=0 (a build for boards up to 9x9 only, in half the time)
        for name, folder in (("dnb_env._native", ""), ("dnb_env._native_wide", "wide/"))
        if folder == "" or os.environ.get("DNB_BUILD_WIDE", "1") != "0"
    ]


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
