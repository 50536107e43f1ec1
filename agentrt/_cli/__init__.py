"""The ``agentrt`` subcommands, one module per group of commands.

:mod:`agentrt.cli` imports only the module of the command it runs (its ``register(commands)``
adds the command's parser), so ``agentrt runs`` does not pay for the runtime or the codec.
:mod:`agentrt._cli.common` holds what every command shares: the options, the one error path and
the exit-code table.
"""
