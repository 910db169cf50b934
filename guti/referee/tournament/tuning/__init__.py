"""``guti tune``: tuning an engine's options by self-play with SPSA.

:mod:`~guti.referee.tournament.tuning.spsa` is the algorithm (pure),
:mod:`~guti.referee.tournament.tuning.state` the tuning's state as a function of the
stored results, :mod:`~guti.referee.tournament.tuning.run` the run driver that plays the
games on game slots and stores them in a tournament database.
"""
