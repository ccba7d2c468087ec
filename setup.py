"""The one compiled module: chpit_assets.akn.flatten, built against the lxml it runs with.

Everything else is declared in pyproject.toml. The module reads libxml2's nodes through lxml's public
C API, so it is compiled with the headers of the same lxml release as [project] pins (build-system
requires it).
"""

import lxml
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("chpit_assets.akn.flatten", ["chpit_assets/akn/flatten.pyx"], include_dirs=lxml.get_include())],
        compiler_directives={"language_level": "3"},
    )
)
