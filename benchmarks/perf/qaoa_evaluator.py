"""Speed of the closed-form p = 1 evaluator against a qiskit-aer statevector, 10–16 qubits.

For each size n, a seeded weighted random graph (density 0.5, weights U[−1, 1]) and a fixed
(γ, β): the closed form (envs/qaoa/subsolver.py) and qiskit-aer (``AerSimulator(method=
"statevector")`` with ``save_expectation_value`` of C = Σ w_uv (1 − Z_u Z_v)/2 on the same
circuit) compute ⟨C⟩; the two values are checked to agree to 1e-9 and the script prints the
median wall time of each and the ratio aer / closed form (both measured in this run).

    .venv/bin/python benchmarks/perf/qaoa_evaluator.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def cost_operator(weights: np.ndarray):
    from qiskit.quantum_info import SparsePauliOp

    n = weights.shape[0]
    terms, constant = [], 0.0
    for u, v in zip(*np.nonzero(np.triu(weights, 1))):
        label = ["I"] * n
        label[n - 1 - u] = label[n - 1 - v] = "Z"  # Qiskit labels are little-endian
        terms.append(("".join(label), -0.5 * weights[u, v]))
        constant += 0.5 * weights[u, v]
    terms.append(("I" * n, constant))
    return SparsePauliOp.from_list(terms).simplify()


def aer_expectation(weights: np.ndarray, gamma: float, beta: float, simulator, operator) -> float:
    from papergym.envs.qaoa.subsolver import qaoa_circuit

    circuit = qaoa_circuit(weights, gamma, beta)
    circuit.save_expectation_value(operator, list(range(weights.shape[0])))
    return float(np.real(simulator.run(circuit).result().data()["expectation_value"]))


def median_time(fn, repeats: int) -> tuple[float, float]:
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from qiskit_aer import AerSimulator

    from papergym.envs.qaoa.subsolver import ClosedForm, expectation

    simulator = AerSimulator(method="statevector", max_parallel_threads=1)  # as the closed form
    rng = np.random.default_rng(0)
    gamma, beta = 0.8, 0.35
    print(f"{'qubits':>6} {'edges':>6} {'closed form [s]':>16} {'qiskit-aer [s]':>15} "
          f"{'ratio aer/closed':>17} {'|diff|':>9}")
    for n in range(10, 17):
        upper = np.triu(rng.uniform(-1, 1, (n, n)) * (rng.random((n, n)) < 0.5), 1)
        weights = upper + upper.T
        operator = cost_operator(weights)
        aer_expectation(weights, gamma, beta, simulator, operator)  # warm-up
        t_closed, closed = median_time(lambda w=weights: ClosedForm(w)(gamma, beta)[0][0],
                                       args.repeats)
        t_aer, aer = median_time(
            lambda w=weights, op=operator: aer_expectation(w, gamma, beta, simulator, op),
            args.repeats)
        difference = abs(closed - aer)
        if difference > 1e-9 * max(1.0, abs(aer)) or abs(expectation(weights, gamma, beta) - aer) > 1e-8:
            raise SystemExit(f"n={n}: closed form {closed} != aer {aer}")
        edges = int(np.count_nonzero(upper))
        print(f"{n:>6} {edges:>6} {t_closed:>16.2e} {t_aer:>15.2e} {t_aer / t_closed:>17.1f} "
              f"{difference:>9.1e}")


if __name__ == "__main__":
    main()
