# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Readers for the public data files kept beside the project (never in it)."""

import os
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "load_adult",
    "load_bank",
    "load_breast_cancer_benign",
    "load_exam_scores",
    "load_yaleb_faces",
]

_ENV = "SKPAPERS_DATA"
_ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip
_ADULT_FEATURES = [
    "age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week",
]  # fmt: skip
_BANK_FEATURES = ["age", "balance", "day", "duration", "campaign", "pdays", "previous"]


def _data_file(path, relative):
    """Resolve a data file from ``path``, then ``$SKPAPERS_DATA``, then ``../shared/data``.

    ``path`` may name the file itself or the data directory holding ``relative``.
    """
    tried = []
    candidates = []
    if path is not None:
        candidates.append(("the `path` argument", Path(path)))
    elif os.environ.get(_ENV):
        candidates.append((f"${_ENV}", Path(os.environ[_ENV])))
    else:
        root = Path(__file__).resolve().parents[2]
        candidates.append(("the default location", root.parent / "shared" / "data"))
    for origin, base in candidates:
        target = base if base.is_file() else base / relative
        if target.is_file():
            return target
        tried.append(f"{target} (from {origin})")
    raise FileNotFoundError(
        f"Data file {relative!r} not found; looked for {', '.join(tried)}. Pass `path=` "
        f"(the file or the data directory) or set the {_ENV} environment variable to "
        "the directory holding adult/, bank/ and upca/."
    )


def _read_csv(file, what, **kwargs):
    """``pd.read_csv`` whose failures are a ValueError naming the file."""
    try:
        return pd.read_csv(file, **kwargs)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"Cannot read {what} from {file}: {exc}") from exc


def _check_table(frame, columns, numeric, file, what):
    """Check that the columns are there, the numeric ones hold numbers, rows remain."""
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(
            f"{file} is not {what}: columns {missing} are missing (found "
            f"{list(frame.columns)[:8]})."
        )
    given = frame[numeric]
    bad = given.apply(pd.to_numeric, errors="coerce").isna().to_numpy() & given.notna().to_numpy()
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f"{file} is not {what}: column {numeric[col]!r} holds "
            f"{given.iat[row, col]!r} in data row {row + 1}, not a number."
        )
    if len(frame) == 0:
        raise ValueError(f"{file} is not {what}: no complete row.")


def _split(frame, features, sensitive, as_frame):
    X = frame[features]
    if as_frame:
        return X.reset_index(drop=True), sensitive.reset_index(drop=True)
    return X.to_numpy(dtype=np.float64), sensitive.to_numpy(dtype=object)


def load_adult(path=None, *, sensitive="sex", as_frame=False, all_groups=False):
    """Load UCI Adult ("Census") with a protected attribute, as in the fair HC papers.

    Rows containing ``?`` are dropped (30,162 remain). The features are the six
    numeric columns, unscaled: age, fnlwgt, education-num, capital-gain,
    capital-loss, hours-per-week.

    Parameters
    ----------
    path : str or path-like, default=None
        The file ``adult.data`` or the data directory holding ``adult/adult.data``.
        ``None`` reads ``$SKPAPERS_DATA``, then ``../shared/data`` beside the project.
    sensitive : {"sex", "race"}, default="sex"
        Protected attribute: sex (``"female"``/``"male"``) or race
        (``"non-white"``/``"white"``).
    as_frame : bool, default=False
        Return a pandas DataFrame and Series instead of numpy arrays.
    all_groups : bool, default=False
        Keep every category of the attribute instead of the two groups above:
        for race the five categories of the file (``"white"``, ``"black"``,
        ``"asian-pac-islander"``, ``"amer-indian-eskimo"``, ``"other"``). Sex
        has two categories either way.

    Returns
    -------
    X : ndarray of shape (30162, 6) or DataFrame
        Numeric features.
    sensitive_features : ndarray of shape (30162,) of str, or Series
        Protected group label of every row.

    Raises
    ------
    FileNotFoundError
        If the file cannot be found; the message names the paths tried and the
        ``SKPAPERS_DATA`` variable.
    ValueError
        If the file cannot be parsed or lacks the expected columns or numbers;
        the message names the file and what is wrong.
    """
    if sensitive not in ("sex", "race"):
        raise ValueError(f"sensitive must be 'sex' or 'race', got {sensitive!r}.")
    file = _data_file(path, "adult/adult.data")
    what = "UCI Adult (adult.data: 15 comma-separated fields per row)"
    frame = _read_csv(
        file, what, header=None, names=_ADULT_COLUMNS, skipinitialspace=True, na_values="?"
    )
    frame = frame.dropna()
    _check_table(frame, _ADULT_COLUMNS, _ADULT_FEATURES, file, what)
    if sensitive == "sex" or all_groups:
        labels = frame[sensitive].str.lower()
    else:
        labels = frame["race"].where(frame["race"] == "White", "non-white").str.lower()
    return _split(frame, _ADULT_FEATURES, labels.rename(sensitive), as_frame)


def load_bank(path=None, *, sensitive="marital", as_frame=False, all_groups=False):
    """Load UCI Bank Marketing (the 4,521-row subset) with a protected attribute.

    The features are the seven numeric columns, unscaled: age, balance, day,
    duration, campaign, pdays, previous.

    Parameters
    ----------
    path : str or path-like, default=None
        The file ``bank.csv`` or the data directory holding ``bank/bank.csv``.
        ``None`` reads ``$SKPAPERS_DATA``, then ``../shared/data`` beside the project.
    sensitive : {"marital", "age", "education"}, default="marital"
        Protected attribute: marital status (``"married"``/``"not married"``),
        age (``"<40"``/``">=40"``) or education (four categories:
        ``"primary"``, ``"secondary"``, ``"tertiary"``, ``"unknown"``).
    as_frame : bool, default=False
        Return a pandas DataFrame and Series instead of numpy arrays.
    all_groups : bool, default=False
        For marital status, keep the three categories of the file
        (``"married"``, ``"single"``, ``"divorced"``) instead of two groups.

    Returns
    -------
    X : ndarray of shape (4521, 7) or DataFrame
        Numeric features.
    sensitive_features : ndarray of shape (4521,) of str, or Series
        Protected group label of every row.

    Raises
    ------
    FileNotFoundError
        If the file cannot be found.
    ValueError
        If the file is malformed; the message names the file and what is wrong.
    """
    if sensitive not in ("marital", "age", "education"):
        raise ValueError(
            f"sensitive must be 'marital', 'age' or 'education', got {sensitive!r}."
        )
    file = _data_file(path, "bank/bank.csv")
    what = "UCI Bank Marketing (bank.csv: ';'-separated with a header row)"
    frame = _read_csv(file, what, sep=";")
    _check_table(frame, [*_BANK_FEATURES, "marital", "education"], _BANK_FEATURES, file, what)
    if sensitive == "education" or (sensitive == "marital" and all_groups):
        labels = frame[sensitive].astype(str)
    elif sensitive == "marital":
        labels = frame["marital"].where(frame["marital"] == "married", "not married")
    else:
        labels = pd.Series(np.where(frame["age"] < 40, "<40", ">=40"), index=frame.index)
    return _split(frame, _BANK_FEATURES, labels.rename(sensitive), as_frame)


def _load_mat(path, relative, variable, what, n_rows=None, n_columns=None):
    """Read a 2-D numeric MATLAB variable; a malformed file is a ValueError naming it."""
    from scipy.io import loadmat

    file = _data_file(path, relative)
    try:
        data = loadmat(file)
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # scipy raises many types on a damaged file
        raise ValueError(f"Cannot read {what} from {file}: {exc}") from exc
    if variable not in data:
        found = sorted(key for key in data if not key.startswith("__"))
        raise ValueError(f"{file} is not {what}: no variable {variable!r} (found {found}).")
    value = data[variable]
    if value.ndim != 2 or value.dtype.kind not in "biuf":
        raise ValueError(
            f"{file} is not {what}: {variable!r} is a {value.ndim}-D array of dtype "
            f"{value.dtype}, not a 2-D numeric matrix."
        )
    for axis, expected in enumerate((n_rows, n_columns)):
        if expected is not None and value.shape[axis] != expected:
            raise ValueError(
                f"{file} is not {what}: {variable!r} has shape {value.shape}, "
                f"expected {expected} {'rows' if axis == 0 else 'columns'}."
            )
    return np.asarray(value, dtype=np.float64)


def load_exam_scores(path=None):
    """Load the exam scores of the UPCA record-linkage experiment.

    Two exams of 707 students, each with 6 subject scores and their total
    (columns 6 and 13, 0-based, are the totals).

    Parameters
    ----------
    path : str or path-like, default=None
        The file ``scores.mat`` or the data directory holding ``upca/scores.mat``.

    Returns
    -------
    scores : ndarray of shape (707, 14)
        Individuals as rows, the 14 attributes as columns.

    Raises
    ------
    FileNotFoundError
        If the file cannot be found.
    ValueError
        If the file is malformed; the message names the file and what is wrong.
    """
    return _load_mat(path, "upca/scores.mat", "scoreM", "the exam scores", n_columns=14)


def load_yaleb_faces(path=None):
    """Load the 64 Extended Yale B face images of subject 3 used by the UPCA paper.

    Parameters
    ----------
    path : str or path-like, default=None
        The file ``yaleb_subject3.mat`` or the data directory holding
        ``upca/yaleb_subject3.mat``.

    Returns
    -------
    faces : ndarray of shape (64, 32256)
        One image per row, pixel values in [0, 255]; ``faces[i].reshape(192, 168,
        order="F")`` is the i-th 192 x 168 picture.

    Raises
    ------
    FileNotFoundError
        If the file cannot be found.
    ValueError
        If the file is malformed; the message names the file and what is wrong.
    """
    faces = _load_mat(path, "upca/yaleb_subject3.mat", "ID3", "the Yale B faces", n_rows=32256)
    return np.ascontiguousarray(faces.T)


def load_breast_cancer_benign():
    """Return the 357 benign rows of scikit-learn's breast cancer data (30 features).

    These rows are the medical records of the UPCA record-linkage experiment;
    they ship with scikit-learn, so no file is needed.

    Returns
    -------
    X : ndarray of shape (357, 30)
        The benign (``target == 1``) rows of
        :func:`sklearn.datasets.load_breast_cancer`.

    Examples
    --------
    >>> from skpapers.datasets import load_breast_cancer_benign
    >>> load_breast_cancer_benign().shape
    (357, 30)
    """
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    return data.data[data.target == 1]
