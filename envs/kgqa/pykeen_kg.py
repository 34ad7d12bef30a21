"""Nations, Kinships and UMLS read as files from the installed ``pykeen`` wheel.

``pykeen`` is located with :func:`importlib.util.find_spec` and never imported (importing
it pulls a large stack); install it data-only with ``pip install --no-deps pykeen==1.11.1``.
Nothing is copied into the repository. The KG is the union of ``{train,valid,test}.txt``
(tab-separated head, relation, tail); every entity gets the single type ``entity``.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

import numpy as np

from papergym.envs.kgqa.graph import DIRECT, KG, UserHop, build_kg
from papergym.envs.kgqa.phrases import ALIASES

PYKEEN_KGS = ("nations", "kinships", "umls")


def pykeen_dataset_dir(name: str) -> Path:
    if name not in PYKEEN_KGS:
        raise ValueError(f"unknown pykeen KG {name!r}; choose one of {PYKEEN_KGS}")
    spec = importlib.util.find_spec("pykeen")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the kgqa real KGs are read from the pykeen wheel; install it data-only with "
            "`pip install --no-deps pykeen==1.11.1`"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets" / name
    if not (path / "train.txt").is_file():
        raise FileNotFoundError(f"{path}/train.txt not found in the installed pykeen")
    return path


def read_triples(name: str) -> list[tuple[str, str, str]]:
    folder = pykeen_dataset_dir(name)
    rows = []
    for split in ("train", "valid", "test"):
        for line in (folder / f"{split}.txt").read_text().splitlines():
            if not line.strip():
                continue
            head, relation, tail = line.split("\t")
            rows.append((head.strip(), relation.strip(), tail.strip()))
    return rows


def display_name(relation: str) -> str:
    return relation.replace("_", " ")


@lru_cache(maxsize=4)
def load_pykeen_kg(name: str) -> KG:
    rows = read_triples(name)
    entities = sorted({h for h, _, _ in rows} | {t for _, _, t in rows})
    relations = sorted({r for _, r, _ in rows})
    e_index = {e: i for i, e in enumerate(entities)}
    r_index = {r: i for i, r in enumerate(relations)}
    triples = np.array([(e_index[h], r_index[r], e_index[t]) for h, r, t in rows])
    kg = build_kg(name, entities, np.zeros(len(entities), dtype=np.int64), ["entity"],
                  [display_name(r) for r in relations], [DIRECT] * len(relations), triples)
    aliases = ALIASES.get(name, {})
    kg.user_hops = [
        UserHop(path=(r_index[r],), phrases=(display_name(r), *aliases.get(r, ())),
                head_type=0, tail_type=0)
        for r in relations
    ]
    kg.n_triples = len(rows)
    return kg
