"""Parsers for raw node observations: text in, msgspec Struct out.

Every function here is pure (no file system, no clock), so the same code judges a
live node, a saved bundle and a test fixture. Malformed input raises
:class:`gpunode.errors.ParseError` with a short message; the caller adds the file name.
"""
