"""Pairwise judgments (AuPEL, FastChat): the judgment table, games, win/tie/loss, online Elo and Bradley-Terry
with bootstrap intervals (docs/conventions.md sec. 17). No Django; plain data in and out; seeded."""
