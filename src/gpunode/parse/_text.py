"""Small helpers for the unit-suffixed values NVIDIA tools print ("143771 MiB", "16x")."""

from __future__ import annotations

from gpunode.relazy import lazy_compile

_NUMBER = lazy_compile(r"^\s*(-?\d+(?:\.\d+)?)")
_NOT_AVAILABLE = {"", "N/A", "[N/A]", "Not Available", "[Not Supported]", "Unknown Error"}


def is_missing(text: str | None) -> bool:
    """nvidia-smi writes several spellings of "no value"; all mean not observed."""
    return text is None or text.strip() in _NOT_AVAILABLE


def leading_float(text: str | None) -> float | None:
    """The number a value starts with ("124.13 W" -> 124.13), or None."""
    if is_missing(text):
        return None
    match = _NUMBER.match(text or "")
    return float(match.group(1)) if match else None


def leading_int(text: str | None) -> int | None:
    """The integer a value starts with ("16x" -> 16, "39 C" -> 39), or None."""
    number = leading_float(text)
    return None if number is None else int(number)


def yes_no(text: str | None) -> bool | None:
    """ "Yes"/"No" (any case) as a bool; anything else is not observed."""
    if is_missing(text):
        return None
    lowered = (text or "").strip().lower()
    if lowered in ("yes", "true"):
        return True
    if lowered in ("no", "false"):
        return False
    return None
