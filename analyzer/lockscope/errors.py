"""Errors that reach the user as one line and a non-zero exit, never a traceback."""


class LockscopeError(Exception):
    """A failure explained in one line; exit status 1."""

    exit_code = 1


class UsageError(LockscopeError):
    """Bad input from the user (option, path, value); exit status 2."""

    exit_code = 2
