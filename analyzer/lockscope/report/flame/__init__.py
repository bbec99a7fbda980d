"""Flame graphs: folded stacks from results, drawn by inferno."""
