"""Command-line values converted without pydantic (start-up time).

typer 0.2x converts every parameter value through a pydantic ``TypeAdapter``
built on first use: importing pydantic and building the adapters costs about
60 ms, more than the rest of ``gpunode probe``'s imports. gpunode's parameters
are plain (str, Path, int, float, bool, an Enum of choices, lists of those), so
they are converted here, with typer's own choice and path checks; any other
parameter (a ranged number, a date, a file) still goes to typer. On a typer
without this hook (older releases never used pydantic) nothing is changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

import typer
import typer.core

try:
    from typer._coercion import RuntimeParam
    from typer._param_types import coerce_cli_choice, coerce_cli_path

    _HOOKS = True
except ImportError:  # a typer whose internals differ: keep its own conversion
    _HOOKS = False

Converter = Callable[[Any, Any, Any], Any]  # (value, param, ctx) -> converted value


def install() -> None:
    """Let typer's parameters convert their values with ``converter`` where it applies."""
    param_cls = getattr(typer.core, "_TyperParameter", None)
    original = getattr(param_cls, "get_runtime_param", None)
    if param_cls is None or original is None or not _HOOKS:
        return

    @dataclass(frozen=True)
    class LightParam(RuntimeParam):
        """typer's runtime parameter, converting with a plain function."""

        convert: Converter

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            return self.convert(value, param, ctx)

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            descriptor = self.type_descriptor
            convert = converter(descriptor)
            if convert is None:
                return original(self)
            self._runtime_param = LightParam(descriptor.parameter_info, descriptor.annotation, convert)
        return self._runtime_param

    param_cls.get_runtime_param = get_runtime_param


def converter(descriptor: Any) -> Converter | None:
    """A converter for a typer ``TypeDescriptor``; None where typer must convert."""
    info, annotation = descriptor.parameter_info, descriptor.annotation
    if descriptor.file_annotation is not None or info.parser is not None:
        return None
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        one = leaf(item, info)
        if one is None:
            return None
        return lambda value, param, ctx: [one(v, param, ctx) for v in _as_list(value)]
    return leaf(annotation, info)


def leaf(annotation: Any, info: Any) -> Converter | None:
    """The converter of one plain value of ``annotation``, or None."""
    if annotation is str:
        return lambda value, param, ctx: str(value)
    if annotation is bool:
        return _flag
    if annotation in (int, float) and info.min is None and info.max is None and not info.clamp:
        return _number(annotation)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return _choice(tuple(annotation), info.case_sensitive)
    if annotation is Path:
        return lambda value, param, ctx: coerce_cli_path(
            value if isinstance(value, Path) else Path(value), info, path_type=Path, param=param, ctx=ctx
        )
    return None


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _choice(choices: tuple[Enum, ...], case_sensitive: bool) -> Converter:
    def choice(value: Any, param: Any, ctx: Any) -> Any:
        try:
            return coerce_cli_choice(value, choices=choices, case_sensitive=case_sensitive, ctx=ctx)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), ctx=ctx, param=param) from None

    return choice


_TRUE = {"1", "true", "t", "yes", "y", "on"}
_FALSE = {"", "0", "false", "f", "no", "n", "off"}


def _flag(value: Any, param: Any, ctx: Any) -> bool:
    """A flag's value (from an environment variable it may be a word)."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise typer.BadParameter(f"{value!r} is not a valid boolean.", ctx=ctx, param=param)


def _number(kind: type[int] | type[float]) -> Converter:
    name = "an integer" if kind is int else "a number"

    def number(value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, kind) and not isinstance(value, bool):
            return value
        try:
            return kind(str(value).strip())
        except ValueError:
            raise typer.BadParameter(f"{value!r} is not {name}.", ctx=ctx, param=param) from None

    return number
