"""Errors that end a command with a one-line message instead of a traceback.

Each carries the exit code the CLI returns, so I/O layers can raise and the CLI
stays a thin translator.
"""

from __future__ import annotations


class GpunodeError(Exception):
    """Base for errors shown to the user as one line."""

    exit_code = 2


class BundleError(GpunodeError):
    """A bundle (or one file in it) is missing, unreadable or malformed."""


class ParseError(GpunodeError):
    """A raw observation (command output, config file) could not be parsed."""


class UsageError(GpunodeError):
    """The command line asks for something impossible."""


class SourceUnreachable(GpunodeError):
    """The cluster API (or another live source) could not be reached."""

    exit_code = 3
