"""Maps the repository's top-level folders into the one import namespace papergym.*.

envs/ -> papergym.envs, agents/ -> papergym.agents, benchmarks/ -> papergym.benchmarks,
leaderboard/ -> papergym.leaderboard. Family subpackages are found automatically, so a new
family needs no edit here. Metadata lives in pyproject.toml.
"""

from setuptools import find_packages, setup

FOLDERS = {"papergym": "papergym", "envs": "papergym.envs", "agents": "papergym.agents",
           "benchmarks": "papergym.benchmarks", "leaderboard": "papergym.leaderboard"}

packages, package_dir = [], {}
for folder, namespace in FOLDERS.items():
    package_dir[namespace] = folder
    packages.append(namespace)
    for sub in find_packages(where=folder):
        packages.append(f"{namespace}.{sub}")
        package_dir[f"{namespace}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"

setup(packages=packages, package_dir=package_dir)
