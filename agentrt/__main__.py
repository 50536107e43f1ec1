"""``python -m agentrt``: the same as the ``agentrt`` console script."""

from agentrt.cli import main

raise SystemExit(main())
