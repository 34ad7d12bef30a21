"""The ``papergym`` command: list, run, compare, submit, verify, leaderboard, claims, check,
publish, export, new-family.

Tables are rich on a terminal and plain tab-separated text in a pipe or file; ``--json``
gives the same data as JSON.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from papergym.api import DEFAULT_STORE
from papergym.problem import TIERS

DEFAULT_OUT = "results"



def _at_least_one(text: str) -> int:
    """argparse type of a count of processes: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value

def _spec_and_path(name: str):
    from papergym.api import _spec_and_path as spec_and_path

    return spec_and_path(name)


def _report(name: str, tier: str, store_path: str, extra_agents: Sequence[str] = (),
            include_stored_plugins: bool = True):
    from papergym.api import report

    return report(name, tier, store_path, extra_agents, include_stored_plugins)


def _plugins(args: argparse.Namespace) -> tuple[list[str], dict[str, dict[str, object]]]:
    """The ``--agent`` plug-ins (absolute references) and their ``--agent-config`` overrides."""
    from papergym.plugins import parse_agent_config, plugin_refs

    refs = plugin_refs(args.agent or ())
    return refs, parse_agent_config(getattr(args, "agent_config", None) or (), refs)


def cmd_list(args: argparse.Namespace) -> int:
    import papergym
    from papergym.agent import REGISTRY
    from papergym.benchmarks.spec import load_spec, spec_paths
    from papergym.leaderboard.render_json import dumps
    from papergym.leaderboard.render_terminal import print_table

    if args.markdown:
        print(benchmarks_markdown())
        return 0
    tables: dict[str, list[dict[str, object]]] = {}
    if args.what in ("all", "problems"):
        tables["problems"] = [{"id": p.id, "kind": p.kind, "family": p.family, "paper": p.paper}
                              for p in papergym.problems()]
    if args.what in ("all", "agents"):
        tables["agents"] = [{"agent": cls.qualified_id(), "role": cls.role, "paper": cls.paper,
                             # an installed plug-in's stand-in: the module:Class it names
                             "module": getattr(cls, "plugin_ref", None) or cls.__module__}
                            for cls in REGISTRY.all()]
    if args.what in ("all", "benchmarks"):
        tables["benchmarks"] = []
        for name, path in spec_paths().items():
            spec = load_spec(path)
            tables["benchmarks"].append({
                "benchmark": name, "family": spec.family, "paper": spec.paper.title,
                "problems": list(dict.fromkeys(p.problem for p in spec.problems)),
                "claims": len(spec.claims)})
    if args.json:
        print(dumps(tables))
        return 0
    for title, records in tables.items():
        columns = list(records[0]) if records else []
        rows = [[", ".join(v) if isinstance(v, list) else v for v in r.values()] for r in records]
        print_table(title, columns, rows)
    return 0


def benchmarks_markdown() -> str:
    """The README's benchmarks table, generated from the registered specs."""
    from papergym.benchmarks.spec import load_spec, spec_paths

    lines = ["| benchmark | paper | problems | agents (method / baselines / references) | claims |",
             "|---|---|---|---|---|"]
    from papergym.agent import REGISTRY
    from papergym.registry import spec as problem_spec

    for name, path in spec_paths().items():
        spec = load_spec(path)
        roles = {"method": set(), "baseline": set(), "reference": set()}
        for section in spec.problems:
            family = problem_spec(section.problem).family
            for entry in section.agents:
                roles[REGISTRY.get(entry.id, family=family).role].add(entry.name)
        problems = ", ".join(f"`{p}`" for p in dict.fromkeys(p.problem for p in spec.problems))
        agents = " / ".join(str(len(roles[r])) for r in ("method", "baseline", "reference"))
        lines.append(f"| `{name}` | {spec.paper.title} | {problems} | {agents} | "
                     f"{len(spec.claims)} |")
    return "\n".join(lines)


def cmd_run(args: argparse.Namespace) -> int:
    from papergym.benchmarks.runner import run_benchmark
    from papergym.benchmarks.spec import spec_paths

    names = list(spec_paths()) if args.all else [args.benchmark]
    if not names or names == [None]:
        print("papergym run: name a benchmark (or --all); see `papergym list benchmarks`",
              file=sys.stderr)
        return 2
    if args.address and args.executor != "ray":
        print("papergym run: --address is the Ray cluster address; it needs --executor ray",
              file=sys.stderr)
        return 2
    from papergym.leaderboard.numbers import fmt

    status = 0
    summaries, pages = [], {}
    plugins, plugin_config = _plugins(args)
    for name in names:
        spec, path = _spec_and_path(name)
        summary = run_benchmark(
            spec, tier=args.tier, store=args.store, workers=args.workers,
            agents=args.agents.split(",") if args.agents else None, seeds=args.seeds,
            extra_agents=plugins, retry_failed=args.retry_failed,
            executor=args.executor, progress=not args.quiet, spec_path=path,
            executor_options=({"address": args.address} if args.executor == "ray"
                              else {"pin": not args.no_pin}),
            plugin_config=plugin_config,
        )
        print(f"{spec.name} [{args.tier}]: {summary.total} trials, {summary.skipped} already "
              f"stored, ran {summary.ran} ({summary.failed} failed) in {fmt(summary.wall_s)}s")
        for note in summary.notes:
            print(f"  note: {note}")
        for failure in summary.failures[:10]:
            print(f"  failed: {failure}")
        if len(summary.failures) > 10:
            print(f"  ... and {len(summary.failures) - 10} more (see the report's failed trials)")
        for line in summary.unscheduled:
            print(f"  skipped: {line}")
        if summary.all_failed:
            print(f"papergym run {spec.name}: every trial of {', '.join(summary.all_failed)} failed",
                  file=sys.stderr)
            status = 1
        if summary.failed and args.strict:
            status = 1
        if args.no_report:
            continue
        report, _ = _report(name, args.tier, args.store)  # the store recorded the plug-ins
        from papergym.leaderboard.summary import summarize

        summaries.append(summarize(report))
        pages[spec.name] = str(_write_reports(report, Path(args.out))["html"])
    if summaries:
        from papergym.leaderboard.publish import write_results_index
        from papergym.leaderboard.render_terminal import print_summary

        print()
        print_summary(summaries, pages, str(write_results_index(Path(args.out))))
    return status


def _write_reports(report, out: Path) -> dict[str, Path]:
    from papergym.leaderboard.render_html import write_report
    from papergym.safe import check_name, safe_join

    return write_report(report, safe_join(out, check_name(report.spec.name, "benchmark name"),
                                          report.tier))


def cmd_compare(args: argparse.Namespace) -> int:
    from papergym.benchmarks.compare import compare
    from papergym.leaderboard.numbers import fmt
    from papergym.leaderboard.publish import write_results_index
    from papergym.leaderboard.render_terminal import print_claims, print_leaderboard

    if len(args.agent) != 1:
        print("papergym compare: give one --agent FILE.py:Class (the agent to rank)", file=sys.stderr)
        return 2
    plugins, plugin_config = _plugins(args)
    spec, path = _spec_and_path(args.benchmark)
    result = compare(spec, plugins[0], tier=args.tier, store=args.store, out=args.out,
                     spec_path=path, plugin_config=plugin_config.get(plugins[0]),
                     workers=args.workers, progress=not args.quiet)
    summary = result.summary
    print(f"{spec.name} [{args.tier}]: {result.imported + result.already_stored} published rows "
          f"({result.imported} newly stored); the agent's {summary.total} trials: "
          f"{summary.skipped} already stored, ran {summary.ran} ({summary.failed} failed) "
          f"in {fmt(summary.wall_s)}s")
    for line in [*summary.notes, *(f"skipped: {u}" for u in summary.unscheduled),
                 *(f"failed: {f}" for f in summary.failures[:10])]:
        print(f"  {line}")
    print("  note: the published rows' held-out instances were drawn under the publisher's "
          "secret eval salt, your agent's under this store's: the same distributions, other "
          "draws")
    print_leaderboard(result.report)
    print_claims(result.report)
    index = write_results_index(Path(args.out))
    print(f"wrote {result.pages['markdown']}, {result.pages['html']} and {index}")
    return 1 if summary.all_failed else 0


def cmd_submit(args: argparse.Namespace) -> int:
    from papergym.benchmarks.submission import submit
    from papergym.leaderboard.numbers import fmt

    if len(args.agent) != 1:
        print("papergym submit: give one --agent FILE.py:Class (the agent to submit)", file=sys.stderr)
        return 2
    plugins, plugin_config = _plugins(args)
    spec, path = _spec_and_path(args.benchmark)
    bundle, summary = submit(spec, plugins[0], tier=args.tier, out=args.output, spec_path=path,
                             plugin_config=plugin_config.get(plugins[0]), workers=args.workers,
                             progress=not args.quiet, command=["papergym", *sys.argv[1:]])
    print(f"{spec.name} [{args.tier}]: {summary.total} trials, {summary.skipped} already stored, "
          f"ran {summary.ran} ({summary.failed} failed) in {fmt(summary.wall_s)}s")
    print(f"wrote {bundle} (its trials' store: {bundle.name}.sqlite beside it); "
          f"anyone can check it: papergym verify {bundle}")
    return 1 if summary.all_failed else 0


def cmd_verify(args: argparse.Namespace) -> int:
    from papergym.benchmarks.submission import verify

    result = verify(args.bundle, sample=args.sample, seed=args.seed, rtol=args.rtol,
                    workers=args.workers, progress=not args.quiet, store=args.store,
                    spec=args.spec)
    for check in result.checks:
        print(f"  {check.outcome:>16}  {check.describe}" + (f": {check.detail}" if check.detail
                                                           and check.outcome == "differs" else ""))
    if result.verified:
        print(f"verified: {result.sample} of {result.rows} trials re-run, every row as bundled "
              f"({fmt_outcomes(result)}); {Path(result.bundle).with_suffix('.verification.json')}"
              + (f"; rows stored in {args.store}" if args.store else ""))
        return 0
    print(f"REJECTED {result.bundle}:", file=sys.stderr)
    for reason in result.reasons:
        print(f"  {reason}", file=sys.stderr)
    return 1


def fmt_outcomes(result) -> str:
    from collections import Counter

    counts = Counter(c.outcome for c in result.checks)
    return ", ".join(f"{n} {outcome}" for outcome, n in counts.items())


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from papergym.leaderboard.publish import write_results_index

    report, _ = _report(args.benchmark, args.tier, args.store, args.agent or ())
    paths = _write_reports(report, Path(args.out))
    index = write_results_index(Path(args.out))
    written = f"wrote {paths['markdown']}, {paths['html']} and {index}"
    if args.json:
        from papergym.leaderboard.render_json import dumps, report_dict

        print(dumps(report_dict(report)))
        print(written, file=sys.stderr)  # stdout stays one JSON document
        return 0
    from papergym.leaderboard.render_terminal import print_claims, print_leaderboard

    print_leaderboard(report)
    print_claims(report)
    print(written)
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    from papergym.leaderboard.render_terminal import print_claims

    report, _ = _report(args.benchmark, args.tier, args.store, args.agent or ())
    if args.json:
        from papergym.leaderboard.render_json import dumps

        print(dumps([v.as_dict() for v in report.verdicts]))
    else:
        print_claims(report)
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    from papergym.leaderboard.publish import output_root, publish

    root = output_root(args.out, "papergym publish")  # before any work: a clear refusal
    report, rows = _report(args.benchmark, args.tier, args.store, args.agent or (),
                           include_stored_plugins=False)  # the spec's agents, and those named
    if report.provenance.get("stored_trials", 0) < report.provenance.get("expected_trials", 0):
        print(f"papergym publish: only {report.provenance.get('stored_trials', 0)} of "
              f"{report.provenance['expected_trials']} trials are stored; run the benchmark "
              f"first", file=sys.stderr)
        return 2
    folder = publish(report, rows, root=root)
    print(f"published {args.benchmark} [{args.tier}] to {folder}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from papergym.api import stored_rows
    from papergym.leaderboard.export import export_rows

    rows = stored_rows(args.benchmark, args.tier, args.store, args.agent or ())
    target = export_rows(rows, args.output)
    print(f"wrote {len(rows)} rows to {target}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from papergym.leaderboard.store import Store, import_jsonl

    with Store(args.store) as store:
        count = import_jsonl(args.rows, store)
    print(f"imported {count} rows from {args.rows} into {args.store}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    import papergym
    from papergym.check import check_problem, write_throughput

    if args.all and args.ids:
        print("papergym check: give problem ids or --all, not both", file=sys.stderr)
        return 2
    if args.out and not args.throughput:
        print("papergym check: --out is the folder of the --throughput table", file=sys.stderr)
        return 2
    if args.throughput:  # refused before the checks run, not after
        from papergym.leaderboard.publish import output_root

        target = (Path(args.throughput) if args.throughput is not True else
                  output_root(args.out, "papergym check --throughput") / "throughput.json")
        output_root(target.parent, "papergym check --throughput")
    ids = [p.id for p in papergym.problems()] if args.all or not args.ids else args.ids
    configs = args.tier or ["default", "smoke"]
    reports = []
    for problem_id in ids:
        for config in dict.fromkeys(configs):
            report = check_problem(problem_id, tier=None if config == "default" else config,
                                   steps=args.steps)
            print(report.summary())
            reports.append(report)
    if args.throughput:
        from papergym.leaderboard.publish import output_root, report_folders, write_index

        rated = [r for r in reports if r.config == configs[-1]]  # one row per problem
        path = write_throughput(rated, target)
        if report_folders(path.parent):  # a published folder: its index links the table
            write_index(path.parent)
        print(f"wrote {path} and {path.with_suffix('.md')}")
    return 0 if all(r.ok for r in reports) else 1


def cmd_check_specs(args: argparse.Namespace) -> int:
    """The power table of every claim at every tier; exit 1 if one at standard/full fails."""
    from papergym.benchmarks.spec import find_spec, power_table, spec_paths
    from papergym.leaderboard.rescore import power_plan, published_rows

    names = args.benchmarks or list(spec_paths())
    bad = 0
    for name in names:
        spec = find_spec(name)
        for row in power_table(spec):
            if row.ok and not args.verbose:
                continue
            enforced = row.refused
            bad += enforced
            mark = "ERROR" if enforced else ("ok" if row.ok else "underpowered")
            text = row.message() if not row.ok else f"{row.claim} at tier {row.tier}: " \
                f"{row.power.describe() if row.power else row.note}"
            print(f"{spec.name}: {mark}: {text}")
        for line in power_plan(spec, published_rows(spec.name)):
            print(f"{spec.name}: {line}")
        for warning in _fairness_warnings(spec):
            print(f"{spec.name}: warning: {warning}")
    print(f"{bad} claim(s) cannot reach their alpha at standard/full")
    return 1 if bad else 0


def cmd_rescore(args: argparse.Namespace) -> int:
    """Every published benchmark re-scored from its stored trials; ``--out`` writes the
    Markdown report, nothing else is written."""
    from papergym.leaderboard.render_json import dumps
    from papergym.leaderboard.rescore import (
        describe,
        markdown_report,
        post_hoc_candidates,
        published_benchmarks,
        rescore,
    )

    results = [rescore(name) for name in args.benchmarks or published_benchmarks()]
    if args.out is not None:
        command = " ".join(["papergym rescore", *args.benchmarks, "--out", str(args.out)])
        text = markdown_report(results, {r.benchmark: post_hoc_candidates(r.benchmark)
                                         for r in results}, command)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.out} ({sum(len(r.changed) for r in results)} changed verdicts in "
              f"{len(results)} benchmarks)")
        if not args.json:
            return 0
    if args.json:
        print(dumps([{"benchmark": r.benchmark, "tier": r.tier, "tallies": r.tallies(),
                      "changed": [{"before": a, "after": b} for a, b in r.changed]}
                     for r in results]))
        return 0
    for result in results:
        print("\n".join(describe(result)))
        first, later = post_hoc_candidates(result.benchmark)
        if later:
            print(f"  added or changed since the first publish ({first[:10]}), not marked "
                  f"post_hoc: {'; '.join(later)}")
    return 0


def _fairness_warnings(spec: object) -> list[str]:
    """Undeclared controls and matched settings, and tuned values at a range edge in the
    benchmark's published rows (benchmarks/matched.py)."""
    import json

    from papergym.benchmarks.matched import edge_warnings, fairness_warnings
    from papergym.leaderboard.publish import PUBLISHED

    warnings = fairness_warnings(spec)
    trials = PUBLISHED / spec.name / "trials.jsonl"
    if trials.is_file():
        with trials.open() as handle:
            warnings += edge_warnings(json.loads(line) for line in handle if line.strip())
    return warnings


def cmd_new_family(args: argparse.Namespace) -> int:
    from papergym.newfamily import camel, new_family

    try:
        written = new_family(args.name, args.root)
    except (ValueError, FileExistsError, FileNotFoundError) as err:
        print(f"papergym new-family: {err}", file=sys.stderr)
        return 2
    root = Path(args.root)
    for path in written:
        print(f"wrote {path.relative_to(root).as_posix()}")
    print(f"next: papergym check papergym/{camel(args.name)}-v0 && papergym run {args.name} --tier smoke "
          f"(docs/contract.md: add a family in 10 steps)")
    return 0


def cmd_cache(args: argparse.Namespace) -> int:
    from papergym import cache

    if args.action == "clear":
        removed = cache.clear(args.namespace)
        print(f"removed {removed} entries from {cache.cache_dir()}")
        return 0
    entries = cache.listing(args.namespace)
    print(f"{cache.cache_dir()}: {len(entries)} entries, "
          f"{sum(e.bytes for e in entries) / 1e6:.1f} MB"
          + ("" if cache.enabled() else " (PAPERGYM_CACHE=off: not used)"))
    for row in cache.describe(entries):
        print("  ".join(row))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from papergym import __version__

    parser = argparse.ArgumentParser(prog="papergym", description=__doc__)
    parser.add_argument("--version", action="version", version=f"papergym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def add_agent_config(p: argparse.ArgumentParser) -> None:
        p.add_argument("--agent-config", action="append", metavar="KEY=VALUE",
                       help="set a field of the plug-in's Config, validated by it (repeatable; "
                            "CLASS.KEY=VALUE with several plug-ins; values read as YAML)")

    def with_store(p: argparse.ArgumentParser, tier_default: str = "smoke") -> None:
        p.add_argument("--tier", choices=TIERS, default=tier_default)
        p.add_argument("--store", default=DEFAULT_STORE, help="SQLite results file")

    p = sub.add_parser("list", help="problems, agents and benchmarks with their paper")
    p.add_argument("what", nargs="?", choices=("all", "problems", "agents", "benchmarks"),
                   default="all")
    p.add_argument("--markdown", action="store_true", help="the README's benchmarks table")
    p.add_argument("--json", action="store_true", help="the same tables as one JSON object")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("run", help="run a benchmark (resumes: stored trials are skipped)")
    p.add_argument("benchmark", nargs="?", help="registered name or path to a spec YAML")
    p.add_argument("--all", action="store_true", help="every registered benchmark")
    with_store(p)
    p.add_argument("--agents", help="comma-separated agent names to run (default: all); "
                   "plug-in ids filter the --agent plug-ins, which run unless others are named")
    p.add_argument("--seeds", type=int, help="override the tier's number of seeds")
    p.add_argument("--agent", action="append", metavar="FILE.py:Class",
                   help="a plug-in agent to run beside the built-ins (repeatable); the store "
                        "keeps it, so later reports include it without --agent")
    add_agent_config(p)
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local (process pool) or ray (Ray tasks; needs papergym[ray])")
    p.add_argument("--address", help="Ray cluster address for --executor ray (e.g. auto)")
    p.add_argument("--workers", type=_at_least_one,
                   help="worker processes, at least 1 (default: one per core)")
    p.add_argument("--no-pin", action="store_true",
                   help="local executor with one worker per CPU: leave the workers to the OS "
                        "scheduler instead of pinning each worker and its agent to its CPU (for "
                        "a machine that other jobs share)")
    p.add_argument("--retry-failed", action="store_true", help="re-run stored failed trials")
    p.add_argument("--out", default=DEFAULT_OUT, help="folder for Markdown/HTML reports")
    p.add_argument("--no-report", action="store_true",
                   help="store the trials only: no reports written, no summary")
    p.add_argument("--strict", action="store_true", help="exit 1 if any trial failed")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("compare", help="rank your agent against a benchmark's published "
                       "leaderboard: runs only your agent, scores it beside the published rows")
    p.add_argument("benchmark", help="registered name (its published rows ship with papergym)")
    with_store(p, tier_default="standard")
    p.add_argument("--agent", action="append", required=True, metavar="FILE.py:Class",
                   help="the agent to rank")
    add_agent_config(p)
    p.add_argument("--workers", type=int, help="worker processes (default: one per core)")
    p.add_argument("--out", default=DEFAULT_OUT, help="folder for Markdown/HTML reports")
    p.add_argument("--quiet", action="store_true", help="no progress")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("submit", help="run your agent on a benchmark and write a submission "
                       "bundle (source, rows, problem code hashes, versions, machine) anyone can verify")
    p.add_argument("benchmark")
    p.add_argument("--tier", choices=TIERS, default="standard")
    p.add_argument("--agent", action="append", required=True, metavar="FILE.py:Class")
    add_agent_config(p)
    p.add_argument("-o", "--output", metavar="BUNDLE.json",
                   help="the bundle (default: <agent id>.<benchmark>.<tier>.bundle.json)")
    p.add_argument("--workers", type=int, help="worker processes (default: one per core)")
    p.add_argument("--quiet", action="store_true", help="no progress")
    p.set_defaults(func=cmd_submit)

    p = sub.add_parser("verify", help="re-run a random sample of a submission bundle's trials "
                       "and check them against its rows")
    p.add_argument("bundle", help="a file written by papergym submit")
    p.add_argument("--sample", type=int, default=3, help="trials to re-run (at least 3)")
    p.add_argument("--seed", type=int, help="seed of the sample's choice (default: unpredictable)")
    p.add_argument("--rtol", type=float, default=1e-6,
                   help="relative tolerance of a metric that is not byte-identical (default 1e-6)")
    p.add_argument("--store", help="store a verified bundle's rows here, marked verified")
    p.add_argument("--spec", help="the benchmark's spec YAML, if it is not a registered one")
    p.add_argument("--workers", type=int, help="worker processes (default: one per core)")
    p.add_argument("--quiet", action="store_true", help="no progress")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("leaderboard", help="tables of a benchmark; writes its Markdown/HTML report")
    p.add_argument("benchmark")
    with_store(p)
    p.add_argument("--agent", action="append", metavar="FILE.py:Class",
                   help="include a plug-in agent's stored trials under its current code "
                        "(repeatable; plug-ins the store recorded are included without it)")
    p.add_argument("--out", default=DEFAULT_OUT, help="folder for Markdown/HTML reports")
    p.add_argument("--json", action="store_true",
                   help="print the report (scores, rank groups, claims, provenance) as JSON")
    p.set_defaults(func=cmd_leaderboard)

    p = sub.add_parser("claims", help="claim verdicts of a benchmark")
    p.add_argument("benchmark")
    with_store(p)
    p.add_argument("--agent", action="append", metavar="FILE.py:Class",
                   help="include a plug-in agent's stored trials under its current code "
                        "(repeatable; plug-ins the store recorded are included without it)")
    p.add_argument("--json", action="store_true", help="the verdicts as a JSON list")
    p.set_defaults(func=cmd_claims)

    p = sub.add_parser("publish", help="write <DIR>/<benchmark>/ (default: the repository's "
                       "leaderboard/published/)")
    p.add_argument("benchmark")
    with_store(p, tier_default="standard")
    p.add_argument("--out", metavar="DIR", help="folder of published benchmarks (default: the "
                   "repository's leaderboard/published/; required when papergym is installed)")
    p.add_argument("--agent", action="append", metavar="FILE.py:Class",
                   help="publish a plug-in's stored trials too (repeatable; by default only "
                        "the spec's agents are published)")
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser("export", help="stored rows of a benchmark to Parquet, CSV or JSONL")
    p.add_argument("benchmark")
    with_store(p)
    p.add_argument("output", help="target file; the suffix picks the format "
                                  "(.parquet, .csv or .jsonl)")
    p.add_argument("--agent", action="append", metavar="FILE.py:Class",
                   help="a plug-in's rows under its current code (repeatable; plug-ins the "
                        "store recorded are exported without it)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", help="stored rows from a JSONL export (e.g. a published "
                       "trials.jsonl) into a store, to re-score them without re-running")
    p.add_argument("rows", help="JSONL file written by export or publish")
    p.add_argument("--store", default=DEFAULT_STORE, help="SQLite results file")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("check-specs", help="power check: can every claim reach its alpha")
    p.add_argument("benchmarks", nargs="*", help="names or spec paths (default: all)")
    p.add_argument("--verbose", action="store_true", help="also list the claims that pass")
    p.set_defaults(func=cmd_check_specs)

    p = sub.add_parser("rescore", help="re-score published benchmarks from their trials.jsonl "
                       "with the current engine; print every verdict that changed (--out: a Markdown "
                       "report)")
    p.add_argument("benchmarks", nargs="*", help="published benchmarks (default: all)")
    p.add_argument("--json", action="store_true", help="the old and new verdicts as JSON")
    p.add_argument("--out", type=Path, metavar="PATH.md",
                   help="also write the report as Markdown: per benchmark the tallies before "
                        "and after (raw, by family, BH) and every changed verdict with why")
    p.set_defaults(func=cmd_rescore)

    p = sub.add_parser("check", help="conformance checks of registered problems")
    p.add_argument("ids", nargs="*", help="problem ids (default: all)")
    p.add_argument("--all", action="store_true",
                   help="every registered problem (what no ids means; for scripts that say so)")
    p.add_argument("--tier", choices=("default", *TIERS), action="append",
                   help="configuration to check; repeatable (default: --tier default --tier smoke, "
                        "where default means no arguments at all, as gymnasium.make(id) builds it)")
    p.add_argument("--steps", type=int, default=200, help="random steps per check")
    p.add_argument("--throughput", metavar="PATH.json", nargs="?", const=True,
                   help="write steps/s per problem with hardware and versions (JSON + Markdown) "
                        "to PATH.json, or throughput.json in --out DIR (default: the repository's "
                        "leaderboard/published/; never the installed package)")
    p.add_argument("--out", metavar="DIR", help="folder for the --throughput table")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("new-family", help="write the skeleton of a new family (env, agents, spec, tests)")
    p.add_argument("name", help="family name: a lowercase Python identifier")
    p.add_argument("--root", default=".", help="repository root to write into (default: .)")
    p.set_defaults(func=cmd_new_family)
    p = sub.add_parser("cache", help="list or clear the cache of problem references "
                                     "($PAPERGYM_CACHE_DIR, default ~/.cache/papergym)")
    p.add_argument("action", choices=("ls", "clear"))
    p.add_argument("namespace", nargs="?", help="only entries under this namespace (e.g. rlvr/sft)")
    p.set_defaults(func=cmd_cache)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from papergym.agent import AgentError
    from papergym.benchmarks.spec import SpecError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (SpecError, AgentError) as err:
        print(f"papergym {args.command}: {err}", file=sys.stderr)
        return 2
    except (KeyError, ValueError, FileNotFoundError) as err:
        if os.environ.get("PAPERGYM_DEBUG"):
            raise
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"papergym {args.command}: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `papergym list | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("\ninterrupted: finished trials are stored; run the same command to resume",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
