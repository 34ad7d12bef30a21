"""The ``papergym`` command: list, run, leaderboard, claims, check, publish, export."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from papergym.problem import TIERS

DEFAULT_STORE = "results/papergym.sqlite"
DEFAULT_OUT = "results"


def _spec_and_path(name: str):
    from papergym.benchmarks.spec import find_spec, spec_paths

    path = spec_paths().get(name) or Path(name)
    return find_spec(name), path


def _report(name: str, tier: str, store_path: str, extra_agents: Sequence[str] = ()):
    from papergym.benchmarks.runner import import_spec_modules, rows_for
    from papergym.leaderboard.report import build_report
    from papergym.leaderboard.store import Store

    spec, path = _spec_and_path(name)
    import_spec_modules(spec, path)
    with Store(store_path) as store:
        trials, rows = rows_for(spec, tier, store, extra_agents=extra_agents)
    return build_report(spec, tier, trials, rows), rows


def cmd_list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    import papergym
    from papergym.agent import REGISTRY
    from papergym.benchmarks.spec import load_spec, spec_paths

    if args.markdown:
        print(benchmarks_markdown())
        return 0
    console = Console()
    if args.what in ("all", "problems"):
        table = Table(title="problems", title_justify="left")
        for col in ("id", "kind", "family", "paper"):
            table.add_column(col)
        for p in papergym.problems():
            table.add_row(p.id, p.kind, p.family, p.paper)
        console.print(table)
    if args.what in ("all", "agents"):
        table = Table(title="agents", title_justify="left")
        for col in ("agent", "role", "paper", "module"):
            table.add_column(col)
        for cls in REGISTRY.all():
            table.add_row(cls.qualified_id(), cls.role, cls.paper, cls.__module__)
        console.print(table)
    if args.what in ("all", "benchmarks"):
        table = Table(title="benchmarks", title_justify="left")
        for col in ("benchmark", "family", "paper", "problems", "claims"):
            table.add_column(col)
        for name, path in spec_paths().items():
            spec = load_spec(path)
            table.add_row(name, spec.family, spec.paper.title,
                          ", ".join(p.problem for p in spec.problems), str(len(spec.claims)))
        console.print(table)
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
    status = 0
    for name in names:
        spec, path = _spec_and_path(name)
        summary = run_benchmark(
            spec, tier=args.tier, store=args.store, workers=args.workers,
            agents=args.agents.split(",") if args.agents else None, seeds=args.seeds,
            extra_agents=args.agent or (), retry_failed=args.retry_failed,
            executor=args.executor, progress=not args.quiet, spec_path=path,
            executor_options={"address": args.address} if args.executor == "ray" else None,
        )
        print(f"{spec.name} [{args.tier}]: {summary.total} trials, {summary.skipped} already "
              f"stored, ran {summary.ran} ({summary.failed} failed) in {summary.wall_s:.1f}s")
        for failure in summary.failures[:10]:
            print(f"  failed: {failure}")
        if args.no_report:
            continue
        report, _ = _report(name, args.tier, args.store, args.agent or ())
        _print_and_write(report, Path(args.out))
        if summary.failed and args.strict:
            status = 1
    return status


def _print_and_write(report, out: Path) -> None:
    from papergym.leaderboard.render_html import write_report
    from papergym.leaderboard.render_terminal import print_claims, print_leaderboard

    print_leaderboard(report)
    print_claims(report)
    from papergym.leaderboard.publish import write_results_index

    paths = write_report(report, out / report.spec.name / report.tier)
    print(f"wrote {paths['markdown']}, {paths['html']} and {write_results_index(out)}")


def cmd_leaderboard(args: argparse.Namespace) -> int:
    report, _ = _report(args.benchmark, args.tier, args.store, args.agent or ())
    _print_and_write(report, Path(args.out))
    return 0


def cmd_claims(args: argparse.Namespace) -> int:
    from papergym.leaderboard.render_terminal import print_claims

    report, _ = _report(args.benchmark, args.tier, args.store)
    if args.json:
        print(json.dumps([v.as_dict() for v in report.verdicts], indent=2, default=str))
    else:
        print_claims(report)
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    from papergym.leaderboard.publish import publish

    report, rows = _report(args.benchmark, args.tier, args.store)
    if report.provenance.get("stored_trials", 0) < report.provenance.get("expected_trials", 0):
        print(f"papergym publish: only {report.provenance.get('stored_trials', 0)} of "
              f"{report.provenance['expected_trials']} trials are stored; run the benchmark "
              f"first", file=sys.stderr)
        return 2
    folder = publish(report, rows)
    print(f"published {args.benchmark} [{args.tier}] to {folder}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from papergym.leaderboard.store import export_csv, export_jsonl

    _, rows = _report(args.benchmark, args.tier, args.store)
    target = Path(args.output)
    (export_jsonl if target.suffix == ".jsonl" else export_csv)(rows, target)
    print(f"wrote {len(rows)} rows to {target}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    import papergym
    from papergym.check import check_problem, write_throughput

    ids = [p.id for p in papergym.problems()] if args.all or not args.ids else args.ids
    reports = []
    for problem_id in ids:
        report = check_problem(problem_id, tier=args.tier, steps=args.steps)
        print(report.summary())
        reports.append(report)
    if args.throughput:
        from papergym.leaderboard.publish import PUBLISHED, write_index

        path = write_throughput(reports, args.throughput)
        if path.resolve().parent == PUBLISHED.resolve():
            write_index(PUBLISHED)
        print(f"wrote {path} and {path.with_suffix('.md')}")
    return 0 if all(r.ok for r in reports) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="papergym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    def with_store(p: argparse.ArgumentParser, tier_default: str = "smoke") -> None:
        p.add_argument("--tier", choices=TIERS, default=tier_default)
        p.add_argument("--store", default=DEFAULT_STORE, help="SQLite results file")

    p = sub.add_parser("list", help="problems, agents and benchmarks with their paper")
    p.add_argument("what", nargs="?", choices=("all", "problems", "agents", "benchmarks"),
                   default="all")
    p.add_argument("--markdown", action="store_true", help="the README's benchmarks table")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("run", help="run a benchmark (resumes: stored trials are skipped)")
    p.add_argument("benchmark", nargs="?", help="registered name or path to a spec YAML")
    p.add_argument("--all", action="store_true", help="every registered benchmark")
    with_store(p)
    p.add_argument("--agents", help="comma-separated agent names to run (default: all)")
    p.add_argument("--seeds", type=int, help="override the tier's number of seeds")
    p.add_argument("--agent", action="append", metavar="FILE.py:Class",
                   help="a plug-in agent to run beside the built-ins (repeatable)")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local (process pool) or ray (Ray tasks; needs papergym[ray])")
    p.add_argument("--address", help="Ray cluster address for --executor ray (e.g. auto)")
    p.add_argument("--workers", type=int, help="worker processes (default: one per core)")
    p.add_argument("--retry-failed", action="store_true", help="re-run stored failed trials")
    p.add_argument("--out", default=DEFAULT_OUT, help="folder for Markdown/HTML reports")
    p.add_argument("--no-report", action="store_true", help="skip tables after the run")
    p.add_argument("--strict", action="store_true", help="exit 1 if any trial failed")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_run)

    for name, func, helptext in (("leaderboard", cmd_leaderboard, "tables and plots"),
                                 ("claims", cmd_claims, "claim verdicts")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("benchmark")
        with_store(p)
        p.add_argument("--agent", action="append", metavar="FILE.py:Class")
        p.add_argument("--out", default=DEFAULT_OUT)
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=func)

    p = sub.add_parser("publish", help="write leaderboard/published/<benchmark>/")
    p.add_argument("benchmark")
    with_store(p, tier_default="standard")
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser("export", help="stored rows of a benchmark to CSV or JSONL")
    p.add_argument("benchmark")
    with_store(p)
    p.add_argument("output", help="target file (.csv or .jsonl)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("check", help="conformance checks of registered problems")
    p.add_argument("ids", nargs="*", help="problem ids (default: all)")
    p.add_argument("--all", action="store_true")
    p.add_argument("--tier", choices=TIERS, default="smoke")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--throughput", metavar="PATH.json", nargs="?",
                   const="leaderboard/published/throughput.json",
                   help="write steps/s per problem with hardware and versions (JSON + Markdown; "
                        "default leaderboard/published/throughput.json)")
    p.set_defaults(func=cmd_check)
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
    except KeyboardInterrupt:
        print("\ninterrupted: finished trials are stored; run the same command to resume",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
