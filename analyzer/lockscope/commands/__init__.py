"""Subcommands that live in their own package (one module each)."""
