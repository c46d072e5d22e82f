"""Competitions: trophies and tournaments (issue 18)."""
