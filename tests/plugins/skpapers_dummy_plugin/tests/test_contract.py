# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The plugin's own contract test, as a plugin author would write it."""

import pytest

pytest.importorskip("skpapers_dummy_plugin", reason="pip install tests/plugins/...")

from skpapers.testing import parametrize_with_plugin_checks  # noqa: E402

EXPECTED = {"broken": {"load_plugin": "deliberately broken entry: its import fails"}}


@parametrize_with_plugin_checks(dist="skpapers-dummy-plugin", expected_failed_checks=EXPECTED)
def test_plugin_contract(estimator, check):
    check(estimator)
