"""docs/envs/: one generated page per registered problem, in sync with the docstrings and the
registry (regenerate with ``python -m papergym.envdocs``)."""

from __future__ import annotations

from papergym import envdocs


def test_docs_envs_pages_match_the_code(capsys):
    code = envdocs.main(["--check"])
    assert code == 0, ("docs/envs/ is out of date; run `python -m papergym.envdocs`:\n"
                       + capsys.readouterr().err)


def test_every_shipped_problem_has_a_page_with_its_contract(tmp_path):
    assert envdocs.main(["--out", str(tmp_path)]) == 0
    names = {p.name for p in tmp_path.glob("*.md")}
    assert names == {f"{s.id.split('/', 1)[1]}.md" for s in envdocs.shipped()} | {"README.md"}
    env_page = (tmp_path / "MDMRemask-v1.md").read_text()
    assert 'gym.make("papergym:papergym/MDMRemask-v1")' in env_page
    assert "| max_episode_steps | the env's `episode_steps` (follows its arguments) |" in env_page
    assert "### Version History" in env_page and "Other versions: [MDMRemask-v0](MDMRemask-v0.md)" in env_page
    assert "| `T` | 16 | 32 | 64 |" in env_page  # the tiers' arguments
    task_page = (tmp_path / "MaskedDiffusionHMM-v0.md").read_text()
    assert "papergym Task" in task_page and "task.evaluate(artifact, seed)" in task_page
    index = (tmp_path / "README.md").read_text()
    assert index.count("](") == len(names) - 1  # one link per page
    # a stale page is reported, and one of no registered problem too
    (tmp_path / "MDMRemask-v1.md").write_text("edited by hand\n")
    (tmp_path / "Gone-v9.md").write_text("x\n")
    assert envdocs.main(["--check", "--out", str(tmp_path)]) == 1


def test_citation_file_names_the_software_and_its_version():
    import tomllib
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    cff = yaml.safe_load((root / "CITATION.cff").read_text())
    assert {"cff-version", "message", "title", "authors"} <= set(cff)  # CFF 1.2.0's required keys
    assert cff["version"] == tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    assert "url" not in cff and "repository-code" not in cff  # none exists yet
