"""Benchmark specs (YAML under specs/), their expansion into trials, the runner, executors."""
