"""The ``agentrt`` command line (console script and ``python -m agentrt``).

Subcommands (``run``, ``resume``, ``runs``, ``show``, ``dump``, ``check``) are added
by their own modules: each one registers itself in :func:`build_parser` with
``subparsers.add_parser(...)`` and ``set_defaults(handler=...)``, where the handler
takes the parsed :class:`argparse.Namespace` and returns the process exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib import metadata

__all__ = ["build_parser", "main"]

#: Exit code for a usage error, as argparse uses it.
EXIT_USAGE = 2

Handler = Callable[[argparse.Namespace], int]


def _version() -> str:
    try:
        return metadata.version("agentrt")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentrt",
        description="Run, resume and inspect durable agentrt agents.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    _add_commands(commands)
    return parser


def _add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the subcommands: ``commands.add_parser(NAME, help=...)`` then
    ``.set_defaults(handler=FUNCTION)``.  None yet; each command issue adds its own."""
    __import__("agentrt.validate._cli", fromlist=["register"]).register(commands)  # agentrt check
    __import__("agentrt.inspect._cli", fromlist=["register"]).register(commands)  # agentrt dump / diff / fork
    __import__("agentrt.teams._cli", fromlist=["register"]).register(commands)  # agentrt teams ...
    from agentrt._cli import register_run_commands

    register_run_commands(commands)
    __import__("agentrt._upgrade._cli", fromlist=["register"]).register(commands)  # agentrt upgrade


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (the console script passes it to ``sys.exit``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return handler(args)
