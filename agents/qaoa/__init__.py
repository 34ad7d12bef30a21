"""Agents of the qaoa family (Neural QAOA², ICML 2026): the method, its divide-and-conquer
baselines and the classical references (simulated annealing, Goemans–Williamson, brute force)."""

from papergym.agents.qaoa import (  # noqa: F401  (importing registers the agents)
    bruteforce,
    gw,
    neural_qaoa2,
    qaoa2_boundary,
    qaoa2_fixed_angle,
    qaoa2_kl,
    qaoa2_modularity,
    qaoa2_random,
    sa,
)
