# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""What every plotting display shares: matplotlib imported lazily, axes to draw on.

A display follows scikit-learn's (:class:`sklearn.metrics.PredictionErrorDisplay`):
``Display.from_estimator(est, X, ..., ax=None)`` computes what to show and
calls ``plot``; ``plot(ax=None, ...)`` draws and sets ``figure_`` and ``ax_``
(one Axes, or an array of Axes for a display of several panels).
"""

import numpy as np


def check_matplotlib(caller):
    """Import matplotlib or raise an ImportError saying how to install it.

    Parameters
    ----------
    caller : str
        The display or function that needs matplotlib, for the message.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:
        raise ImportError(
            f"{caller} needs matplotlib, an optional dependency: pip install matplotlib"
        ) from error


def check_display_estimator(display, estimator, expected, attributes=None):
    """Check what ``display.from_estimator`` is given: matplotlib, the class, fitted.

    Parameters
    ----------
    display : type
        The display class, for the messages.
    estimator : object
        The estimator passed in.
    expected : type
        The estimator class the display shows.
    attributes : list of str, default=None
        Fitted attributes to require (:func:`~sklearn.utils.validation.check_is_fitted`).
    """
    from sklearn.utils.validation import check_is_fitted

    check_matplotlib(f"{display.__name__}.from_estimator")
    if not isinstance(estimator, expected):
        raise TypeError(
            f"{display.__name__} shows a fitted {expected.__name__}; got "
            f"{type(estimator).__name__}."
        )
    check_is_fitted(estimator, attributes)


def axes_to_draw_on(ax, n_panels, caller, panel_size=(5.0, 4.0)):
    """Return ``(figure, axes)``: the user's axes, or a new figure of ``n_panels``.

    Parameters
    ----------
    ax : matplotlib Axes, sequence of Axes or None
        Where to draw: None makes a figure with ``n_panels`` side by side;
        otherwise one Axes (``n_panels == 1``) or ``n_panels`` of them.
    n_panels : int
        Panels the display draws.
    caller : str
        The display, for the messages.
    panel_size : tuple of float, default=(5.0, 4.0)
        Inches per panel of a new figure.

    Returns
    -------
    figure : matplotlib Figure
    axes : Axes when ``n_panels == 1``, else ndarray of ``n_panels`` Axes
    """
    check_matplotlib(caller)
    import matplotlib.pyplot as plt

    if ax is None:
        figure, axes = plt.subplots(
            1, n_panels, figsize=(panel_size[0] * n_panels, panel_size[1]), layout="constrained"
        )
        return figure, axes if n_panels == 1 else np.asarray(axes)
    axes = np.ravel(np.asarray(ax, dtype=object))
    if axes.size != n_panels or not all(hasattr(a, "figure") for a in axes):
        raise ValueError(
            f"{caller} draws {n_panels} panel(s): pass ax as "
            + ("one matplotlib Axes" if n_panels == 1 else f"a sequence of {n_panels} Axes")
            + f" or None; got {ax!r:.80}."
        )
    return axes[0].figure, axes[0] if n_panels == 1 else axes
