"""Toy crystals for ``TensorUQDielectric``: a random Bravais lattice with a small basis of toy
species, its periodic bonds, and a bond-polarizability dielectric tensor (numpy float64).

ε = I + (4π / V) Σ_bonds (r₀ / r)³ [α_⊥ I + (α_∥ − α_⊥) b̂ b̂ᵀ], the sum over the bonds of the
atoms of one cell (each bond once), α_∥ > α_⊥ > 0 set by the species pair: symmetric and SPD by
construction, isotropic for the cubic lattices (sc / bcc / fcc positions, whose bond stars have
cubic symmetry), and ε(R·crystal) = R ε Rᵀ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LATTICES = ("cubic", "tetragonal", "orthorhombic", "hexagonal", "trigonal", "monoclinic")
OOD_LATTICE = "monoclinic"
N_SPECIES = 4
N_PAIRS = N_SPECIES * (N_SPECIES + 1) // 2
ALPHA_PARALLEL = np.array([2.0, 3.0, 4.5, 6.5])  # per species; a pair uses the geometric mean
ALPHA_RATIO = 0.35  # α_⊥ / α_∥
R0 = 2.5  # Å, the bond length at which the pair polarizability is its table value
BOND_FACTOR = 1.2  # bonds: pairs within 1.2 x the nearest-neighbour distance
MIN_DISTANCE = 2.2  # Å: bases with closer atoms are redrawn


@dataclass
class Crystal:
    lattice: str
    cell: np.ndarray  # rows a1, a2, a3 (Å)
    positions: np.ndarray  # Cartesian, [n, 3]
    species: np.ndarray  # [n] ints
    bonds: np.ndarray  # relative vectors from the cell atom to its neighbour, [m, 3]
    pairs: np.ndarray  # [m] pair index of the two species
    volume: float


def pair_index(s: np.ndarray, t: np.ndarray) -> np.ndarray:
    a, b = np.minimum(s, t), np.maximum(s, t)
    return a * N_SPECIES - a * (a - 1) // 2 + (b - a)


def lattice_cell(kind: str, rng: np.random.Generator) -> np.ndarray:
    a, b, c = rng.uniform(3.0, 6.0, size=3)
    if kind == "cubic":
        b = c = a
        alpha = beta = gamma = 90.0
    elif kind == "tetragonal":
        b = a
        alpha = beta = gamma = 90.0
    elif kind == "orthorhombic":
        alpha = beta = gamma = 90.0
    elif kind == "hexagonal":
        b = a
        alpha, beta, gamma = 90.0, 90.0, 120.0
    elif kind == "trigonal":
        b = c = a
        alpha = beta = gamma = rng.uniform(75.0, 105.0)
    elif kind == "monoclinic":
        alpha, gamma, beta = 90.0, 90.0, rng.uniform(95.0, 120.0)
    else:
        raise ValueError(f"unknown lattice {kind!r}; known: {', '.join(LATTICES)}")
    al, be, ga = np.radians([alpha, beta, gamma])
    a1 = np.array([a, 0.0, 0.0])
    a2 = np.array([b * np.cos(ga), b * np.sin(ga), 0.0])
    cx = c * np.cos(be)
    cy = c * (np.cos(al) - np.cos(be) * np.cos(ga)) / np.sin(ga)
    a3 = np.array([cx, cy, np.sqrt(max(c * c - cx * cx - cy * cy, 1e-6))])
    return np.stack([a1, a2, a3])


def make_crystal(rng: np.random.Generator, lattices: tuple[str, ...], atoms: tuple[int, int]) -> Crystal:
    """A random crystal of one of ``lattices`` with a basis of ``atoms[0]..atoms[1]`` atoms."""
    while True:
        kind = lattices[rng.integers(len(lattices))]
        cell = lattice_cell(kind, rng)
        if kind == "cubic":  # cubic-symmetric positions: sc, bcc (CsCl) or fcc (one species)
            motif = [[[0, 0, 0]], [[0, 0, 0], [0.5, 0.5, 0.5]],
                     [[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]]]
            allowed = [m for m in motif if atoms[0] <= len(m) <= atoms[1]] or motif[:1]
            frac = np.array(allowed[rng.integers(len(allowed))], dtype=float)
            species = rng.integers(N_SPECIES, size=len(frac))
            if len(frac) == 4:
                species[:] = species[0]
        else:
            n = int(rng.integers(atoms[0], atoms[1] + 1))
            frac = np.concatenate([np.zeros((1, 3)), rng.uniform(size=(n - 1, 3))])
            species = rng.integers(N_SPECIES, size=n)
        positions = frac @ cell
        bonds, pairs, d_min = neighbours(cell, positions, species)
        if d_min >= MIN_DISTANCE:
            return Crystal(kind, cell, positions, species, bonds, pairs, float(abs(np.linalg.det(cell))))


def neighbours(cell: np.ndarray, positions: np.ndarray, species: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, float]:
    """Bonds (i in the cell, j any periodic image, i < j or an image) within BOND_FACTOR x the
    nearest-neighbour distance, each bond once; and that distance."""
    shifts = np.array([[i, j, k] for i in (-2, -1, 0, 1, 2) for j in (-2, -1, 0, 1, 2)
                       for k in (-2, -1, 0, 1, 2)], dtype=float) @ cell
    rel = positions[None, :, None, :] + shifts[None, None] - positions[:, None, None, :]  # i, j, shift
    dist = np.linalg.norm(rel, axis=-1)
    dist_nz = np.where(dist < 1e-9, np.inf, dist)
    d_min = float(dist_nz.min())
    i, j, s = np.nonzero(dist_nz <= BOND_FACTOR * d_min)
    vec = rel[i, j, s]
    # each undirected bond appears twice (i -> j + n and j -> i − n): keep one orientation
    key = np.round(vec, 8)
    first = (key[:, 0] > 0) | ((key[:, 0] == 0) & ((key[:, 1] > 0) | ((key[:, 1] == 0) & (key[:, 2] > 0))))
    return vec[first], pair_index(species[i[first]], species[j[first]]), d_min


def pair_alpha(pairs: np.ndarray) -> np.ndarray:
    s = np.array([(a, b) for a in range(N_SPECIES) for b in range(a, N_SPECIES)])
    table = np.sqrt(ALPHA_PARALLEL[s[:, 0]] * ALPHA_PARALLEL[s[:, 1]])
    return table[pairs]


def dielectric(bonds: np.ndarray, pairs: np.ndarray, volume: float) -> np.ndarray:
    """The bond-polarizability ε (3 x 3) of bond vectors ``bonds`` in a cell of ``volume``."""
    r = np.linalg.norm(bonds, axis=1)
    b = bonds / r[:, None]
    a_par = pair_alpha(pairs) * (R0 / r) ** 3
    a_perp = ALPHA_RATIO * a_par
    outer = b[:, :, None] * b[:, None, :]
    per_bond = a_perp[:, None, None] * np.eye(3) + (a_par - a_perp)[:, None, None] * outer
    return np.eye(3) + 4 * np.pi / volume * per_bond.sum(axis=0)
