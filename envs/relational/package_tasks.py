"""Relational tasks from the tables scikit-learn ships (``load_*``: offline), split into a parent
and a child table the way the data were measured, so that the relation is real, not invented.
The parent table never holds the target or a function of it: the signal reaches an entity only
through its child rows (and, for ``diabetes-labs``, the patient's own demographics).

- ``digits-rows``: parent ``image`` (id only), child ``pixel_row`` (8 rows per 8 x 8 image: the
  row index, categorical, and its 8 pixel values); tasks "digit d vs rest", d = 0..9.
- ``cancer-views``: parent ``patient`` (id only), child ``view`` (3 rows: kind in {mean, error,
  worst}, categorical, and the 10 measurements of that kind); target malignant.
- ``diabetes-labs`` (exploratory): parent ``patient`` (age, sex, bmi, bp), child ``lab`` (6 rows:
  the test id s1..s6, categorical, and its value); target progression above the median.
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits

from papergym.envs.relational.generator import Database, RelationalTask, Table

DIGITS = tuple(range(10))


def _child(parent: str, name: str, per: int, kind: np.ndarray, values: np.ndarray, labels: list[str]
           ) -> Table:
    """A child table with ``per`` rows per parent row: a categorical ``kind`` and value columns."""
    n = len(values)
    columns = {"kind": np.tile(kind, n).astype(float)}
    flat = values.reshape(n * per, -1)
    columns.update({label: flat[:, j].astype(float) for j, label in enumerate(labels)})
    return Table(name, columns, frozenset({"kind"}), {parent: np.repeat(np.arange(n), per)})


def _id_only(name: str, n: int) -> Table:
    return Table(name, {}, frozenset(), hidden=np.zeros((n, 0)))


def digits_database() -> tuple[Database, np.ndarray]:
    data = load_digits()
    images = data.images.astype(float)  # (1797, 8, 8)
    child = _child("image", "pixel_row", 8, np.arange(8), images, [f"p{j}" for j in range(8)])
    return Database({"image": _id_only("image", len(images)), "pixel_row": child},
                    [("image", "pixel_row")]), data.target


def cancer_database() -> tuple[Database, np.ndarray]:
    data = load_breast_cancer()
    X = data.data.reshape(len(data.data), 3, 10)  # sklearn's order: 10 means, 10 errors, 10 worst
    labels = [n.replace("mean ", "").replace(" ", "_") for n in data.feature_names[:10]]
    child = _child("patient", "view", 3, np.arange(3), X, labels)
    return Database({"patient": _id_only("patient", len(X)), "view": child},
                    [("patient", "view")]), (data.target == 0).astype(np.int64)  # 0 = malignant


def diabetes_database() -> tuple[Database, np.ndarray]:
    data = load_diabetes()
    X = data.data
    patient = Table("patient", {k: X[:, j] for j, k in enumerate(("age", "sex", "bmi", "bp"))},
                    frozenset({"sex"}))
    patient.columns["sex"] = (X[:, 1] > 0).astype(float)
    child = _child("patient", "lab", 6, np.arange(6), X[:, 4:10], ["value"])
    y = (data.target > np.median(data.target)).astype(np.int64)
    return Database({"patient": patient, "lab": child}, [("patient", "lab")]), y


def package_tasks(digits: tuple[int, ...] = DIGITS, cancer: bool = True, diabetes: bool = True
                  ) -> list[tuple[str, str, RelationalTask]]:
    """(group, suite, task) triples; the ten digit tasks share the group ``digits-rows``."""
    out = []
    if digits:
        db, target = digits_database()
        entities = np.arange(len(target))
        for d in digits:
            out.append(("digits-rows", "package", RelationalTask(
                db, "image", "package", entities, (target == d).astype(np.int64), name=f"digits-rows-{d}")))
    if cancer:
        db, y = cancer_database()
        out.append(("cancer-views", "package", RelationalTask(
            db, "patient", "package", np.arange(len(y)), y, name="cancer-views")))
    if diabetes:
        db, y = diabetes_database()
        out.append(("diabetes-labs", "exploratory", RelationalTask(
            db, "patient", "package", np.arange(len(y)), y, name="diabetes-labs")))
    return out
