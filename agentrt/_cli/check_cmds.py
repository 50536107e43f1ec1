"""``agentrt check PATH|MODULE [--agents-only] [--json] [--profile default|portable]``.

A PATH is a file or a directory (walked for ``*.py``).  Anything else is taken as
a module name and resolved to its file the way the import system would find it,
without importing it (``_resolve.find_module_file``): checking code must never run it.
Exit status: 0 clean, 1 when a finding counts as an error under the profile, 2 for a
usage error (no such path or module, a file that does not compile).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agentrt.validate import (
    Finding,
    Profile,
    Project,
    check_file,
    exit_status,
    find_module_file,
    iter_python_files,
    project_roots,
    render_json,
    render_text,
)

__all__ = ["register", "run_check"]

EXIT_USAGE = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``check`` subcommand to the ``agentrt`` parser."""
    parser = subparsers.add_parser(
        "check",
        help="report what cannot cross an await, without running the code",
        description=(
            "Static validator: compiles each file (never imports it) and reports locals that hold a value "
            "agentrt cannot checkpoint while they are live at an await (codes AR101-AR112, see "
            "docs/hazards.md). Silence one finding with `# agentrt: ignore[CODE]` on its line."
        ),
    )
    parser.add_argument(
        "target", metavar="PATH|MODULE", nargs="?", help="a .py file, a directory, or a module name"
    )
    parser.add_argument(
        "--against",
        metavar="STORE",
        default=None,
        help="instead: judge the unfinished runs of STORE against the code here, compiled, not imported "
        "(what 'agentrt upgrade --dry-run' would say after a deploy; see docs/upgrade.md)",
    )
    parser.add_argument("--json", action="store_true", help='print {"findings": [...], "summary": {...}}')
    parser.add_argument(
        "--agents-only",
        action="store_true",
        help="check only agent code: the functions passed to agent(run=...) (or start= / on_tool_results=) "
        "and the module-level functions they call, not every async def (for a host project whose web "
        "handlers are coroutines too)",
    )
    parser.add_argument(
        "--profile",
        choices=("default", "portable"),
        default="default",
        help="portable: portability findings count as errors too (exit status 1)",
    )
    parser.set_defaults(handler=run_check)
    return parser


def _resolve_target(target: str) -> Path | None:
    path = Path(target)
    if path.exists():
        return path
    if target.endswith(".py") or os.sep in target:
        return None
    sys_path = [os.getcwd(), *sys.path]
    found = find_module_file(target, sys_path) or find_module_file(target)
    if found is not None and found.name == "__init__.py":
        return found.parent
    return found


def run_check(args: argparse.Namespace) -> int:
    if args.against is not None:  # the pre-deploy check of issue 15 (agentrt._upgrade)
        from agentrt._cli.common import guarded
        from agentrt._cli.upgrade_cmds import cmd_check_against

        return guarded(lambda a: cmd_check_against(a.against, a.json))(args)
    if args.target is None:
        print("agentrt check: error: give a PATH|MODULE to check, or --against STORE", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)  # a usage error, as argparse reports a missing argument
    profile = Profile.named(args.profile)
    root = _resolve_target(args.target)
    if root is None:
        print(f"agentrt check: error: no such file, directory or module: {args.target}", file=sys.stderr)
        return EXIT_USAGE
    findings: list[Finding] = []
    files = 0
    broken = False
    projects: dict[tuple[str, ...], Project] = {}
    for file in iter_python_files(root):
        files += 1
        roots = project_roots(file)
        try:
            project = projects.setdefault(roots, Project(roots))
            findings.extend(check_file(file, project=project, agents_only=args.agents_only))
        except SyntaxError as error:
            print(f"{file}:{error.lineno or 0}: syntax error: {error.msg}", file=sys.stderr)
            broken = True
        except (OSError, UnicodeDecodeError, ValueError) as error:
            print(f"{file}: cannot read: {error}", file=sys.stderr)
            broken = True
    output = render_json(findings, profile, files) if args.json else render_text(findings, profile, files)
    print(output)
    if broken:
        return EXIT_USAGE
    return exit_status(findings, profile)
