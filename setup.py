"""Build of the optional C++ extension ``dnb_env._native``; everything else is in pyproject.toml.

The extension (sources in ``dnb_env/csrc``) is compiled with ``-O3 -std=c++17`` and no ``-march``, so a
wheel runs on any CPU of its platform. It is optional: without a C++17 compiler (or without pybind11 in the
build environment) the install still succeeds, ``dnb_env.native.available()`` is False and everything runs
on the pure-Python engine.
"""

from __future__ import annotations

import glob
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
    return [
        Extension(
            "dnb_env._native",
            sources=["dnb_env/csrc/module.cpp", "dnb_env/csrc/solver_module.cpp",
                     "dnb_env/csrc/search_module.cpp", "dnb_env/csrc/env_module.cpp"],
            depends=sorted(glob.glob("dnb_env/csrc/*.hpp")),
            include_dirs=[pybind11.get_include()],
            language="c++",
            optional=True,  # a failed compile warns and installs the pure-Python package
        )
    ]


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
