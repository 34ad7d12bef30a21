"""Submission bundles: one file that lets anyone check a plug-in's leaderboard rows.

``papergym submit <benchmark> --agent mine.py:Class`` runs the plug-in's trials in a store of
the bundle's own (so its eval salt is fresh and used for nothing else) and writes one JSON
file: the agent's source and its SHA-256, its config, every row, the code hash of each problem,
the package versions, the machine and the command, and the store's eval salt. The salt is
revealed on purpose: the rows are final, and a verifier needs it to draw the same held-out
instances.

``papergym verify BUNDLE`` checks that the source matches its hash, that the rows are exactly
the trials this installation keys for that source and config (none missing, none added), and
re-runs a random sample of them (at least 3), sealed and sandboxed like any trial, under the
bundle's salt in a fresh store. A re-run row must equal the bundle's: byte-identical metrics,
or every metric within ``rtol``/``atol`` (another machine's floating point). The result is
written beside the bundle (``<bundle>.verification.json``); with ``--store`` a verified bundle's
rows go into that store carrying ``provenance["submission"]`` (``verified``, the bundle's hash,
the sampled keys), which the renderers read for the "verified" badge.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import random
import socket
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from papergym.leaderboard.store import Row, Store
from papergym.registry import spec as problem_spec

from .runner import Trial, expand_trials, rows_for, run_benchmark
from .spec import BenchmarkSpec, SpecError

FORMAT = "papergym-submission/1"
MIN_SAMPLE = 3
HELPERS_LIMIT_BYTES = 1_000_000  # the .py files beside the plug-in, which it may import


class BundleError(SpecError):
    """A bundle that cannot be checked here (malformed, other problem code); the message says
    why and what to do."""


def bundle_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def default_bundle_path(agent_id: str, benchmark: str, tier: str) -> Path:
    return Path(f"{agent_id}.{benchmark}.{tier}.bundle.json")


def submit(spec: BenchmarkSpec, agent: str, tier: str = "standard", out: str | Path | None = None,
           spec_path: Path | None = None, plugin_config: Mapping[str, Any] | None = None,
           workers: int | None = None, progress: bool = True,
           command: Sequence[str] | None = None) -> tuple[Path, Any]:
    """Run the plug-in ``agent`` on ``spec`` at ``tier`` in the bundle's own store and write the
    bundle. Returns its path and the run's summary."""
    from papergym import __version__
    from papergym.plugins import describe_agent_file, plugin_record, plugin_refs
    from papergym.problem import load_or_create_salt
    from papergym.provenance import run_provenance

    (ref,) = plugin_refs([agent])
    config = dict(plugin_config or {})
    cls = describe_agent_file(ref, config)
    path = Path(out) if out is not None else default_bundle_path(cls.id, spec.name, tier)
    store = path.with_name(path.name + ".sqlite")  # the bundle's own store: its own salt
    summary = run_benchmark(spec, tier=tier, store=store, workers=workers, agents=[cls.id],
                            extra_agents=[ref], plugin_config={ref: config}, progress=progress,
                            spec_path=spec_path)
    with Store(store) as db:  # the plug-in as the store recorded it (with its config)
        trials, rows = rows_for(spec, tier, db)
    ours = {t.key for t in trials if t.agent_ref == ref}
    rows = [r for r in rows if r.key in ours]
    if not rows:
        raise BundleError(f"{cls.id} has no trial on {spec.name} [{tier}]; nothing to submit")
    source_path = Path(ref.rpartition(":")[0])
    record = plugin_record(ref, cls)  # the bytes the run described and ran, not the file now
    if record is None:
        raise BundleError(f"{ref}: a bundle holds a plug-in file (path/to/file.py:ClassName)")
    source = record["source"]
    helpers = helper_sources(source_path)
    provenance = run_provenance()
    bundle = {
        "format": FORMAT,
        "benchmark": spec.name,
        "tier": tier,
        "agent": {"file": source_path.name, "class": ref.rpartition(":")[2], "id": cls.id,
                  "family": cls.family, "role": cls.role, "config": cls.validate_config({})
                  .model_dump(mode="json"), "code_hash": cls.code_hash(),
                  "sha256": hashlib.sha256(source).hexdigest(), "source": source.decode(),
                  "helpers": helpers, "helpers_sha256": helpers_sha256(helpers)},
        "problems": {t.problem_id: t.problem_hash for t in trials if t.agent_ref == ref},
        "eval_salt": (load_or_create_salt(store) or b"").hex(),
        "rows": [_portable(r) for r in rows],
        "papergym": __version__,
        "git": {"sha": provenance.get("git_sha"), "dirty": provenance.get("git_dirty")},
        "versions": provenance.get("versions", {}),
        "machine": {"host": socket.gethostname(), "platform": platform.platform(),
                    "processor": provenance.get("processor"), "cpu_count": os.cpu_count(),
                    "python": platform.python_version()},
        "command": list(command if command is not None else sys.argv),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(bundle, indent=1, sort_keys=True, allow_nan=True) + "\n")
    return path, summary


def helper_sources(plugin: Path, limit_bytes: int = HELPERS_LIMIT_BYTES) -> dict[str, str]:
    """The .py files beside a plug-in (modules it may import), by name."""
    helpers, total = {}, 0
    for path in sorted(plugin.parent.glob("*.py")):
        if path.name == plugin.name:
            continue
        total += path.stat().st_size
        if total > limit_bytes:
            raise BundleError(f"the .py files beside {plugin} exceed {limit_bytes // 1000} kB; "
                              "put the agent and its helper modules in a folder of their own")
        helpers[path.name] = path.read_text()
    return helpers


def helpers_sha256(helpers: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(dict(helpers), sort_keys=True).encode()).hexdigest()


def _portable(row: Row) -> dict[str, Any]:
    """A row as the bundle keeps it: the submitter's absolute path becomes the file name."""
    record = row.as_dict()
    file, _, cls = record["agent_id"].rpartition(":")
    record["agent_id"] = f"{Path(file).name}:{cls}"
    record["provenance"] = {**record["provenance"], "agent_ref": record["agent_id"]}
    return record


# ----------------------------------------------------------------------------- verify


@dataclass
class TrialCheck:
    key: str
    describe: str
    outcome: str  # "identical" | "within tolerance" | "differs"
    detail: str = ""


@dataclass
class Verification:
    bundle: str
    bundle_sha256: str
    verified: bool
    reasons: list[str] = field(default_factory=list)
    checks: list[TrialCheck] = field(default_factory=list)
    rows: int = 0
    sample: int = 0
    wall_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        from papergym import __version__

        return {"bundle": self.bundle, "bundle_sha256": self.bundle_sha256,
                "verified": self.verified, "reasons": self.reasons, "rows": self.rows,
                "sample": self.sample, "checks": [c.__dict__ for c in self.checks],
                "wall_s": round(self.wall_s, 1), "papergym": __version__,
                "host": socket.gethostname(),
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def load_bundle(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        bundle = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise BundleError(f"{path}: not a readable submission bundle ({err})") from None
    if not isinstance(bundle, dict) or bundle.get("format") != FORMAT:
        raise BundleError(f"{path}: not a {FORMAT} bundle (format "
                          f"{bundle.get('format') if isinstance(bundle, dict) else None!r})")
    for name in ("benchmark", "tier", "agent", "problems", "eval_salt", "rows"):
        if name not in bundle:
            raise BundleError(f"{path}: field {name!r} is missing")
    return bundle


def metrics_match(ours: Mapping[str, float], theirs: Mapping[str, float], rtol: float,
                  atol: float) -> tuple[str, str]:
    """``("identical" | "within tolerance" | "differs", detail)`` of two metric dicts."""
    if json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True):
        return "identical", ""
    if set(ours) != set(theirs):
        return "differs", f"metric names differ: {sorted(set(ours) ^ set(theirs))}"
    off = [f"{name}: bundle {theirs[name]!r}, re-run {ours[name]!r}" for name in sorted(ours)
           if not math.isclose(ours[name], theirs[name], rel_tol=rtol, abs_tol=atol)
           and not (math.isnan(ours[name]) and math.isnan(theirs[name]))]
    return ("differs", "; ".join(off)) if off else ("within tolerance", f"rtol {rtol:g}")


def verify(path: str | Path, sample: int = MIN_SAMPLE, seed: int | None = None,
           rtol: float = 1e-6, atol: float = 1e-9, workers: int | None = None,
           progress: bool = True, store: str | Path | None = None,
           spec: str | Path | None = None) -> Verification:
    """Check the bundle at ``path`` (see the module's docstring); raise :class:`BundleError`
    when it cannot be checked by this installation. ``spec``: the benchmark's spec file, for a
    benchmark that is not registered (default: the registered one the bundle names)."""
    from papergym.api import _spec_and_path
    from papergym.plugins import describe_agent_file
    from papergym.problem import salt_id

    from .runner import import_spec_modules

    started = time.perf_counter()
    path = Path(path)
    bundle = load_bundle(path)
    result = Verification(bundle=str(path), bundle_sha256=bundle_sha256(path), verified=False,
                          rows=len(bundle["rows"]))
    agent = bundle["agent"]
    source = str(agent.get("source", "")).encode()
    helpers = agent.get("helpers") or {}
    if hashlib.sha256(source).hexdigest() != agent.get("sha256"):
        result.reasons.append("the agent's source does not match its SHA-256")
    if helpers and helpers_sha256(helpers) != agent.get("helpers_sha256"):
        result.reasons.append("the helper modules do not match their SHA-256")
    if result.reasons:
        return _finish(result, started)
    spec_obj, spec_path = _spec_and_path(spec or bundle["benchmark"])
    if spec_obj.name != bundle["benchmark"]:
        raise BundleError(f"{path} is a bundle of benchmark {bundle['benchmark']!r}; "
                          f"{spec_path} is {spec_obj.name!r}")
    import_spec_modules(spec_obj, spec_path)
    tier = bundle["tier"]
    other = {p: h for p, h in bundle["problems"].items() if problem_spec(p).code_hash() != h}
    if other:
        detail = "; ".join(f"{p}: bundle {h}, here {problem_spec(p).code_hash()}"
                           for p, h in other.items())
        git = bundle.get("git", {}).get("sha") or "?"
        raise BundleError(f"{path}: produced by other problem code ({detail}); verify it with "
                          f"the papergym it names (git {str(git)[:12]}, {bundle.get('papergym')})")
    with tempfile.TemporaryDirectory(prefix="papergym-verify-") as folder:
        work = Path(folder)
        work.chmod(0o755)  # agent processes of another user import the source from here
        for name, text in helpers.items():
            (work / Path(name).name).write_text(text)
        source_file = work / Path(agent["file"]).name
        source_file.write_bytes(source)
        source_file.chmod(0o644)
        ref = f"{source_file}:{agent['class']}"
        cls = describe_agent_file(ref, agent.get("config") or {})
        if cls.code_hash() != agent.get("code_hash") or cls.id != agent.get("id"):
            result.reasons.append(f"the source declares {cls.qualified_id()} with code hash "
                                  f"{cls.code_hash()}, the bundle says {agent.get('id')} "
                                  f"{agent.get('code_hash')}")
            return _finish(result, started)
        trials = {t.key: t for t in expand_trials(spec_obj, tier, agents=[cls.id], extra_agents=[ref],
                                                  plugin_config={ref: agent.get("config") or {}})
                  if t.agent_ref == ref}
        rows = {}
        for record in bundle["rows"]:
            try:
                row = Row(**record)
            except TypeError as err:
                result.reasons.append(f"a row is malformed ({err})")
                return _finish(result, started)
            rows[row.key] = row
        result.reasons += _row_mismatches(trials, rows)
        salt = salt_id(bytes.fromhex(str(bundle["eval_salt"]))) if bundle["eval_salt"] else None
        unsalted = [k for k, r in rows.items() if r.provenance.get("eval_salt_id") != salt]
        if unsalted:
            result.reasons.append(f"{len(unsalted)} rows were not drawn under the bundle's eval "
                                  "salt (rows of another store)")
        if result.reasons:
            return _finish(result, started)
        chooser = random.Random(seed) if seed is not None else random.SystemRandom()
        chosen = chooser.sample(sorted(rows), min(len(rows), max(MIN_SAMPLE, sample)))
        result.sample = len(chosen)
        rerun = _rerun(spec_obj, spec_path, tier, ref, cls.id, agent.get("config") or {}, bundle,
                       rows, chosen, work / "verify.sqlite", workers, progress)
        for key in chosen:
            theirs, ours = rows[key], rerun.get(key)
            if ours is None:
                check = TrialCheck(key, trials[key].describe(), "differs", "no re-run row")
            elif ours.status != theirs.status:
                check = TrialCheck(key, trials[key].describe(), "differs",
                                   f"status: bundle {theirs.status}, re-run {ours.status} "
                                   f"{(ours.error or '').splitlines()[:1]}")
            else:
                outcome, detail = metrics_match(ours.metrics, theirs.metrics, rtol, atol)
                check = TrialCheck(key, trials[key].describe(), outcome, detail)
            result.checks.append(check)
        bad = [c for c in result.checks if c.outcome == "differs"]
        result.reasons += [f"{c.describe}: {c.detail}" for c in bad]
        result.verified = not result.reasons
        if result.verified and store is not None:
            _import_verified(store, ref, agent.get("config") or {}, rows, result, chosen)
    return _finish(result, started)


def _row_mismatches(trials: Mapping[str, Trial], rows: Mapping[str, Row]) -> list[str]:
    """Why the rows are not exactly the trials (same keys, and each row's fields its trial's)."""
    reasons = []
    missing, extra = sorted(set(trials) - set(rows)), sorted(set(rows) - set(trials))
    if missing:
        reasons.append(f"{len(missing)} of the agent's {len(trials)} trials have no row "
                       f"(e.g. {trials[missing[0]].describe()})")
    if extra:
        reasons.append(f"{len(extra)} rows are no trial of this source, config and problem code "
                       f"(e.g. key {extra[0]})")
    for key in sorted(set(trials) & set(rows)):
        trial, row = trials[key], rows[key]
        fields = {"seed": (trial.seed, row.seed), "section": (trial.section, row.section),
                  "problem_kwargs": (trial.problem_kwargs, row.problem_kwargs),
                  "agent_config": (trial.agent_config, row.agent_config),
                  "tier": (trial.tier, row.tier)}
        wrong = [name for name, (a, b) in fields.items() if a != b]
        if wrong:
            reasons.append(f"row {key}: {', '.join(wrong)} differ from its trial's")
    return reasons


def _rerun(spec: BenchmarkSpec, spec_path: Path | None, tier: str, ref: str, agent_id: str,
           config: Mapping[str, Any], bundle: Mapping[str, Any], rows: Mapping[str, Row],
           chosen: Sequence[str], store: Path, workers: int | None,
           progress: bool) -> dict[str, Row]:
    """Re-run the ``chosen`` trials in a fresh ``store`` holding the bundle's salt: the other
    rows are stored first, so the runner computes exactly the chosen ones, sealed as always."""
    from papergym.problem import salt_path

    salt = salt_path(store)
    salt.write_text(str(bundle["eval_salt"]))
    salt.chmod(0o600)
    with Store(store) as db:
        for key, row in rows.items():
            if key not in chosen:
                db.put(row)
    run_benchmark(spec, tier=tier, store=store, workers=workers, agents=[agent_id],
                  extra_agents=[ref], plugin_config={ref: dict(config)}, progress=progress,
                  spec_path=spec_path)
    with Store(store) as db:
        return {r.key: r for r in db.get_many(chosen)}


def _import_verified(store: str | Path, ref: str, config: Mapping[str, Any],
                     rows: Mapping[str, Row], result: Verification, chosen: Sequence[str]) -> None:
    """The verified rows into ``store``, each marked as a submission (what the badge reads),
    and the plug-in recorded, so the store's reports include it."""
    from papergym.plugins import describe_agent_file, plugin_record

    mark = {"verified": True, "bundle_sha256": result.bundle_sha256,
            "verified_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "sample_keys": sorted(chosen)}
    with Store(store) as db:
        for row in rows.values():
            row.provenance = {**row.provenance, "submission": mark}
            db.put(row)
        record = plugin_record(ref, describe_agent_file(ref, dict(config)))
        if record is not None:
            db.put_plugin(**record)


def _finish(result: Verification, started: float) -> Verification:
    result.wall_s = time.perf_counter() - started
    target = Path(result.bundle).with_suffix(".verification.json")
    target.write_text(json.dumps(result.as_dict(), indent=1) + "\n")
    return result
