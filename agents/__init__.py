"""Agents that play battles: the :class:`agents.base.Agent` protocol, a random
baseline and scripted agents built from the tactics of ``shared/rules/tactics.md``.

Build one by name with :func:`agents.registry.make_agent`.
"""
