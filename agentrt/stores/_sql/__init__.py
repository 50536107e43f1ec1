"""The SQL stores' shared core: the run state machine written once (``core``, ``store``) over a
small per-engine :class:`~agentrt.stores._sql.dialect.Dialect`; ``agentrt.stores.sqlite`` and
``agentrt.stores.postgres`` hold only what is their engine's."""
