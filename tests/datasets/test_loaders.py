# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Loaders of the real data files: shapes, protected groups, paths and errors."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from skpapers.datasets import (
    load_adult,
    load_bank,
    load_breast_cancer_benign,
    load_exam_scores,
    load_yaleb_faces,
)


def test_adult_groups_match_the_published_counts(data_home):
    X, sex = load_adult(data_home)
    assert X.shape == (30162, 6) and X.dtype == np.float64
    assert Counter(sex) == {"female": 9782, "male": 20380}
    _, race = load_adult(data_home, sensitive="race")
    assert Counter(race) == {"non-white": 4229, "white": 25933}
    assert np.isfinite(X).all() and (X[:, 0] >= 17).all()  # age column, '?' rows dropped


def test_bank_groups_and_frame_output(data_home):
    X, marital = load_bank(data_home)
    assert X.shape == (4521, 7)
    assert Counter(marital) == {
        "married": 2797,
        "not married": 1724,
    }
    frame, age = load_bank(data_home, sensitive="age", as_frame=True)
    assert isinstance(frame, pd.DataFrame) and isinstance(age, pd.Series)
    assert list(frame.columns)[:2] == ["age", "balance"]
    assert ((frame["age"] < 40) == (age == "<40")).all()
    assert age.value_counts().to_dict() == {"<40": 2290, ">=40": 2231}


def test_upca_files_shapes_and_path_forms(data_home):
    scores = load_exam_scores(data_home)
    assert scores.shape == (707, 14)
    np.testing.assert_array_equal(scores, load_exam_scores(data_home / "upca" / "scores.mat"))
    faces = load_yaleb_faces(data_home)
    assert faces.shape == (64, 32256) and faces.min() >= 0 and faces.max() <= 255
    assert faces[0].reshape(192, 168, order="F").shape == (192, 168)
    assert load_breast_cancer_benign().shape == (357, 30)


def test_environment_variable_is_the_fallback(data_home, monkeypatch):
    monkeypatch.setenv("SKPAPERS_DATA", str(data_home))
    assert load_exam_scores().shape == (707, 14)


def test_missing_file_error_names_path_and_variable(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match=r"bank/bank.csv.*SKPAPERS_DATA"):
        load_bank(tmp_path)
    monkeypatch.setenv("SKPAPERS_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        load_adult()


def test_unknown_sensitive_attribute(data_home):
    with pytest.raises(ValueError, match="'sex' or 'race'"):
        load_adult(data_home, sensitive="age")
    with pytest.raises(ValueError, match="'marital', 'age' or 'education'"):
        load_bank(data_home, sensitive="sex")


def _write(path, content):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


_ADULT_ROW = (
    "39, State-gov, {}, Bachelors, 13, Never-married, Adm, Not-in-family, White, Male, "
    "2174, 0, 40, United-States, <=50K\n"
)
_BANK_HEADER = "age;balance;day;duration;campaign;pdays;previous;marital;education\n"


@pytest.mark.parametrize(
    "load, relative, content, message",
    [
        (load_adult, "adult/adult.data", "", "no complete row"),
        (load_adult, "adult/adult.data", '39, "State-gov\n', "Cannot read UCI Adult"),
        (load_adult, "adult/adult.data", "39, State-gov, 77516\n", "no complete row"),
        (
            load_adult, "adult/adult.data", _ADULT_ROW.format("lots"),
            "column 'fnlwgt' holds 'lots' in data row 1",
        ),
        (load_bank, "bank/bank.csv", b"\xff\xfe\x00garbage;\x81\n1;2\n", "Cannot read UCI Bank"),
        (load_bank, "bank/bank.csv", "a;b;c\n1;2;3\n", r"columns \['age', 'balance'"),
        (
            load_bank, "bank/bank.csv", _BANK_HEADER + "30;many;5;79;1;-1;0;married;primary\n",
            "column 'balance' holds 'many' in data row 1",
        ),
    ],
)
def test_malformed_tables_name_the_file(tmp_path, load, relative, content, message):
    file = _write(tmp_path / relative, content)
    with pytest.raises(ValueError, match=message) as info:
        load(tmp_path)
    assert str(file) in str(info.value)


def test_malformed_mat_files_name_the_file(tmp_path):
    from scipy.io import savemat

    scores = tmp_path / "upca" / "scores.mat"
    _write(scores, b"not a MATLAB file at all")
    with pytest.raises(ValueError, match="Cannot read the exam scores from .*scores.mat"):
        load_exam_scores(tmp_path)
    savemat(scores, {"other": np.ones((3, 14))})
    with pytest.raises(ValueError, match=r"no variable 'scoreM' \(found \['other'\]\)"):
        load_exam_scores(tmp_path)
    savemat(scores, {"scoreM": np.ones((3, 5))})
    with pytest.raises(ValueError, match="has shape \\(3, 5\\), expected 14 columns"):
        load_exam_scores(tmp_path)
    savemat(scores, {"scoreM": np.array(["ab", "cd"])})
    with pytest.raises(ValueError, match="not a 2-D numeric matrix"):
        load_exam_scores(tmp_path)
    savemat(scores, {"scoreM": np.arange(28.0).reshape(2, 14)})
    np.testing.assert_array_equal(load_exam_scores(tmp_path), np.arange(28.0).reshape(2, 14))
    faces = _write(tmp_path / "upca" / "yaleb_subject3.mat", b"")
    savemat(faces, {"ID3": np.ones((100, 64))})
    with pytest.raises(ValueError, match="expected 32256 rows"):
        load_yaleb_faces(tmp_path)
