"""The command line: ``main`` parses, each ``*_cmd`` module is one subcommand."""

from .main import main

__all__ = ["main"]
