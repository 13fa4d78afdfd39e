"""The optional C reader of ssrisk (ssrisk/_cyaml.c, against libyaml).

Everything else is declared in pyproject.toml. The extension is optional: where libyaml's
headers or a C compiler are missing, the build goes on without it and ssrisk reads YAML with
its pure-Python reader (ssrisk.yamlpos), which gives the same data and positions.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "ssrisk._cyaml",
            sources=["ssrisk/_cyaml.c"],
            libraries=["yaml"],
            optional=True,
        )
    ]
)
