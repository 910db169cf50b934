"""guti: a tournament host for engines of the Indian war games (Egara-guti, Pretwa and cousins).

Three parts, one import direction: :mod:`guti.rules` (the games' rules, pure computation),
:mod:`guti.engine` (the reference engine, built on the rules) and :mod:`guti.referee`
(matches, tournaments, checks and reports, built on the rules and never on the engine).
:mod:`guti.cli` is the ``guti`` command above all three.
"""
