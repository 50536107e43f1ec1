"""Adapters: agents written with other frameworks, made durable (pydantic-ai, the OpenAI Agents SDK).

``agentrt.adapters.pydantic_ai.durable(agent)`` and ``agentrt.adapters.openai_agents.durable(agent)``
each import their framework; this package imports nothing.
"""
