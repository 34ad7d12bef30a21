"""Physics-consistent link randomization through the pseudo-inertia matrix (XHugWBC, sec. 3.1).

A rigid link with mass ``m``, first moment ``h = m c`` and rotational inertia ``Ibar`` about its
frame origin is physical iff its 4x4 pseudo-inertia

    J = [[Sigma, h], [h^T, m]],   Sigma = 1/2 tr(Ibar) I3 - Ibar          (second moment)

is positive definite. Writing ``J = L L^T`` and perturbing ``J' = (U L)(U L)^T = U J U^T`` with

    U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]]

keeps ``J'`` positive definite for any unconstrained ``theta = (alpha, d1, d2, d3, s12, s23, s13,
t1, t2, t3)``: an affine deformation ``x -> E x + t`` of the link's mass plus a density scaling by
``e^{2 alpha}``. Hence ``m' = e^{2 alpha} m`` and ``c' = E c + t`` exactly.

The "naive" sampler (the paper's Naive Random ablation) scales mass and each principal moment of
a box approximation independently, which can break the triangle inequality ``I1 + I2 >= I3``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Ranges of theta_inert [recon]: the paper's appendix table is not available.
ALPHA_RANGE = 0.15
STRETCH_RANGE = 0.2
SHEAR_RANGE = 0.05
SHIFT_FRACTION = 0.10  # t_i within +-10% of the link's extent along axis i


@dataclass(frozen=True)
class LinkInertia:
    """Mass, centre of mass (link frame) and 3x3 inertia about the centre of mass."""

    mass: float
    com: np.ndarray
    inertia_com: np.ndarray

    def inertia_origin(self) -> np.ndarray:
        """Ibar: rotational inertia about the link frame origin (parallel-axis theorem)."""
        c = self.com
        return self.inertia_com + self.mass * (float(c @ c) * np.eye(3) - np.outer(c, c))

    def fullinertia(self) -> np.ndarray:
        """MuJoCo's ``fullinertia`` order: Ixx, Iyy, Izz, Ixy, Ixz, Iyz."""
        i = self.inertia_com
        return np.array([i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]])


def pseudo_inertia(link: LinkInertia) -> np.ndarray:
    """J = [[Sigma, h], [h^T, m]] with Sigma = 1/2 tr(Ibar) I - Ibar and h = m c."""
    ibar = link.inertia_origin()
    sigma = 0.5 * np.trace(ibar) * np.eye(3) - ibar
    h = link.mass * link.com
    out = np.zeros((4, 4))
    out[:3, :3] = sigma
    out[:3, 3] = h
    out[3, :3] = h
    out[3, 3] = link.mass
    return out


def link_from_pseudo_inertia(j: np.ndarray) -> LinkInertia:
    """Recover m' = J44, c' = h'/m', Ibar' = tr(Sigma') I - Sigma', I_c = Ibar' - m'(|c|^2 I - cc^T)."""
    mass = float(j[3, 3])
    com = j[:3, 3] / mass
    sigma = j[:3, :3]
    ibar = np.trace(sigma) * np.eye(3) - sigma
    inertia_com = ibar - mass * (float(com @ com) * np.eye(3) - np.outer(com, com))
    return LinkInertia(mass, com, 0.5 * (inertia_com + inertia_com.T))


def upper_cholesky(j: np.ndarray) -> np.ndarray:
    """J = L L^T with L upper triangular and positive diagonal (raises if J is not PD)."""
    flip = np.eye(4)[::-1]
    lower = np.linalg.cholesky(flip @ j @ flip)
    return flip @ lower @ flip


def deformation(theta: np.ndarray) -> np.ndarray:
    """U(theta) for theta = (alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3)."""
    alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3 = (float(v) for v in theta)
    u = np.array([
        [np.exp(d1), s12, s13, t1],
        [0.0, np.exp(d2), s23, t2],
        [0.0, 0.0, np.exp(d3), t3],
        [0.0, 0.0, 0.0, 1.0],
    ])
    return np.exp(alpha) * u


def stretch_matrix(theta: np.ndarray) -> np.ndarray:
    """E: the 3x3 block of U / e^alpha, the affine map applied to the link's geometry."""
    return deformation(theta)[:3, :3] / np.exp(float(theta[0]))


def perturb_link(link: LinkInertia, theta: np.ndarray) -> LinkInertia:
    """J' = (U L)(U L)^T: positive definite for every theta (eq. of sec. 3.1)."""
    ul = deformation(theta) @ upper_cholesky(pseudo_inertia(link))
    return link_from_pseudo_inertia(ul @ ul.T)


def sample_theta(rng: np.random.Generator, extent: np.ndarray, planar: bool = False,
                 scale: float = 1.0) -> np.ndarray:
    """Uniform theta_inert; ``scale`` > 1 widens every range (out-of-distribution bodies).

    Planar bodies keep c_y = 0 and no x-y / y-z coupling: s12 = s23 = t2 = 0.
    """
    theta = np.concatenate([
        rng.uniform(-ALPHA_RANGE, ALPHA_RANGE, 1),
        rng.uniform(-STRETCH_RANGE, STRETCH_RANGE, 3),
        rng.uniform(-SHEAR_RANGE, SHEAR_RANGE, 3),
        rng.uniform(-1.0, 1.0, 3) * SHIFT_FRACTION * np.asarray(extent, dtype=float),
    ]) * scale
    if planar:
        theta[[4, 5, 8]] = 0.0
    return theta


def principal_moments(inertia_com: np.ndarray) -> np.ndarray:
    return np.linalg.eigvalsh(0.5 * (inertia_com + inertia_com.T))


def satisfies_triangle(moments: np.ndarray, tol: float = 1e-12) -> bool:
    """I1 + I2 >= I3 for every permutation (the physical-realizability condition)."""
    a, b, c = np.sort(moments)
    return bool(a + b >= c * (1 - tol) - tol and a > 0)


def box_inertia(mass: float, size: np.ndarray) -> np.ndarray:
    """Principal moments of a solid box with full side lengths ``size``."""
    x, y, z = size
    return mass / 12.0 * np.array([y * y + z * z, x * x + z * z, x * x + y * y])


def naive_link(rng: np.random.Generator, mass: float, com: np.ndarray,
               box_size: np.ndarray) -> LinkInertia:
    """Naive Random: box approximation; mass and each principal moment scaled by U[0.5, 2].

    The moments are scaled independently, so the result may be non-physical; MuJoCo's
    ``balanceinertia`` then silently repairs it at compile time.
    """
    new_mass = mass * rng.uniform(0.5, 2.0)
    moments = box_inertia(mass, box_size) * rng.uniform(0.5, 2.0, 3)
    return LinkInertia(new_mass, np.asarray(com, dtype=float).copy(), np.diag(moments))
