# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""An entry point whose import fails, as a broken plugin's would."""

import skpapers_dummy_plugin_missing_dependency  # noqa: F401
