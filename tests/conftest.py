# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared test configuration: data location, headless plotting, seeded numpy."""

import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

_SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
if "SKPAPERS_DATA" not in os.environ and _SHARED_DATA.is_dir():
    os.environ["SKPAPERS_DATA"] = str(_SHARED_DATA)


@pytest.fixture
def data_home():
    """Directory of the real data sets; skips the test when it is absent."""
    path = Path(os.environ.get("SKPAPERS_DATA", _SHARED_DATA))
    if not path.is_dir():
        pytest.skip(f"real data directory {path} is absent (set SKPAPERS_DATA)")
    return path
