"""Seeing a tournament: SVG boards, the self-contained HTML report and the live page.

This room sits beside the command line: it reads the tournament store and the standings
(``guti.referee.storage``, ``guti.referee.stats``), replays games with the rules core, and nothing below it imports
it. One geometry source (:mod:`guti.referee.web.geometry`) feeds both the Python SVG renderer
and the report's JavaScript renderer.
"""
