"""The ``run``, ``resume``, ``runs`` and ``show`` subcommands (registered by :mod:`agentrt.cli`)."""

from __future__ import annotations

from typing import Any


def register_run_commands(commands: Any) -> None:
    """Add ``run``, ``resume``, ``runs`` and ``show`` to the ``agentrt`` command."""
    from agentrt._cli import drive, inspect_cmds, serve, workers

    drive.register(commands)
    inspect_cmds.register(commands)
    workers.register(commands)
    serve.register(commands)
