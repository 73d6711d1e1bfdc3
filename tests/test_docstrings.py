# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Numpydoc validation of every public class, method and function."""

import importlib
import inspect

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate", reason="needs the [docs] extra")

PUBLIC_MODULES = [
    "skpapers.cluster",
    "skpapers.datasets",
    "skpapers.decomposition",
    "skpapers.linear_model",
    "skpapers.metrics",
    "skpapers.registry",
    "skpapers.testing",
]
# GL08 no docstring, SS01/SS03 summary line, PR01/PR02 parameters vs signature,
# PR07/PR10 parameter descriptions, RT01 missing Returns, ES01 not required.
CHECKS = {"GL08", "SS01", "SS03", "PR01", "PR02", "PR07", "PR10", "RT01"}


def _public_objects():
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if not callable(obj):
                continue
            path = f"{obj.__module__}.{obj.__qualname__}"
            if inspect.isclass(obj) and issubclass(obj, Warning | Exception):
                continue
            yield path
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and inspect.isfunction(member):
                        yield f"{path}.{attr}"


@pytest.mark.parametrize("path", sorted(set(_public_objects())))
def test_docstring_is_valid_numpydoc(path):
    result = numpydoc_validate.validate(path)
    errors = [f"{code}: {msg}" for code, msg in result["errors"] if code in CHECKS]
    assert not errors, "\n".join(errors)
