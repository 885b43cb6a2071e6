"""``cached_property`` as Python 3.12 has it, for the values judged for every node.

Python 3.11's ``functools.cached_property`` takes a lock shared by every instance on
each first access (3.12 dropped it as useless): that cost more than most of the values
NodeContext and Judgement compute, about fifty for each node judged. Without the lock
two threads may both compute a value; every value cached this way is a pure function
of its instance, so either result is the same.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

if sys.version_info >= (3, 12):
    from functools import cached_property
else:

    class cached_property(Generic[T]):
        """Computes the value on first access and stores it in the instance's ``__dict__``,
        where later accesses find it without calling this descriptor."""

        def __init__(self, func: Callable[[Any], T]) -> None:
            self.func = func
            self.attrname = func.__name__
            self.__doc__ = func.__doc__

        def __set_name__(self, owner: type, name: str) -> None:
            self.attrname = name

        @overload
        def __get__(self, instance: None, owner: type | None = None) -> cached_property[T]: ...

        @overload
        def __get__(self, instance: object, owner: type | None = None) -> T: ...

        def __get__(self, instance: object | None, owner: type | None = None) -> T | cached_property[T]:
            if instance is None:
                return self
            value = instance.__dict__[self.attrname] = self.func(instance)
            return value


__all__ = ["cached_property"]
