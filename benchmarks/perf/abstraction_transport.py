"""Speed of the abstraction family's exact transport solver against the transport LP.

Times W1 on N random 3 x 3 problems with the spanning-tree solver (one batched call) and with
``scipy.optimize.linprog`` (one call per problem), checks they agree to 1e-9, and prints the
ratio measured in this run. Run: ``.venv/bin/python benchmarks/perf/abstraction_transport.py``.
"""

from __future__ import annotations

import time

import numpy as np

from papergym.envs.abstraction.transport import w1_linprog, w1_trees


def main(n: int = 300) -> None:
    rng = np.random.default_rng(0)
    mu, nu = rng.dirichlet(np.ones(3), size=n), rng.dirichlet(np.ones(3), size=n)
    C = rng.random((n, 3, 3))
    started = time.perf_counter()
    trees = w1_trees(mu, nu, C)
    tree_s = time.perf_counter() - started
    started = time.perf_counter()
    lp = np.array([w1_linprog(mu[i], nu[i], C[i]) for i in range(n)])
    lp_s = time.perf_counter() - started
    assert np.abs(trees - lp).max() <= 1e-9
    print(f"{n} problems: trees {tree_s / n * 1e6:.1f} us/problem, linprog {lp_s / n * 1e6:.0f} "
          f"us/problem, ratio {lp_s / tree_s:.0f}x (max |diff| {np.abs(trees - lp).max():.1e})")


if __name__ == "__main__":
    main()
