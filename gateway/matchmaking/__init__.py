"""Matchmaking: queues of tickets that a matcher on every gateway replica turns
into started tables, each exactly once (``queues.py``), by pure rules
(``rules.py``) and single-slot scripts (``scripts.py``)."""
