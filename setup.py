"""Maps the repository's top-level folders into the one import namespace papergym.*.

envs/ -> papergym.envs, agents/ -> papergym.agents, benchmarks/ -> papergym.benchmarks,
leaderboard/ -> papergym.leaderboard. Family subpackages are found automatically, so a new
family needs no edit here; so are data folders without an ``__init__.py`` (namespace packages:
papergym.data.maxcut, papergym.benchmarks.specs), whose files pyproject.toml's package-data
names. Metadata lives in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

# not packages: the published tables (their trials.jsonl ship as package data, for
# `papergym compare`), perf scripts, caches
EXCLUDE = ["*__pycache__*", "published", "published.*", "perf", "perf.*"]

FOLDERS = {"papergym": "papergym", "envs": "papergym.envs", "agents": "papergym.agents",
           "benchmarks": "papergym.benchmarks", "leaderboard": "papergym.leaderboard"}

packages, package_dir = [], {}
for folder, namespace in FOLDERS.items():
    package_dir[namespace] = folder
    packages.append(namespace)
    for sub in find_namespace_packages(where=folder, exclude=EXCLUDE):
        packages.append(f"{namespace}.{sub}")
        package_dir[f"{namespace}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"

setup(packages=packages, package_dir=package_dir)
