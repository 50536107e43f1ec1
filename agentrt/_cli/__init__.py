"""The ``run``, ``resume``, ``runs`` and ``show`` subcommands (registered by :mod:`agentrt.cli`)."""

from __future__ import annotations

import argparse


def register_run_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``run``, ``resume``, ``runs`` and ``show`` to the ``agentrt`` command."""
    from agentrt._cli import drive, inspect_cmds, serve, workers

    drive.register(commands)
    inspect_cmds.register(commands)
    workers.register(commands)
    serve.register(commands)
