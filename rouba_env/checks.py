"""Argument checks, written once: every public entry point names the bad value and what is allowed.

Integers are Python or numpy integers but never booleans (``True`` is not a
seat); numbers are finite; flags are real booleans. Each check returns the
value converted to its plain Python type, or raises a ValueError that says
which argument was wrong, what it was and what would be accepted.
"""

from __future__ import annotations

import math

import numpy as np


SHOWN_CHARACTERS = 80
"""Longest text of a bad value an error message quotes."""


def shown(value) -> str:
    """A bad value as an error message quotes it: short, even for a huge number or string."""
    if is_int(value) and abs(int(value)) >= 10**30:
        return f"an integer of about {int(int(value).bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 5] + " ...)"


def is_int(value) -> bool:
    """True for a Python or numpy integer that is not a boolean."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int within ``minimum..maximum`` (either end open when None); ValueError otherwise."""
    if not is_int(value) or (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        allowed = ("an int" + (f" >= {minimum}" if minimum is not None and maximum is None else "")
                   + (f" in {minimum}..{maximum}" if minimum is not None and maximum is not None else "")
                   + (f" <= {maximum}" if minimum is None and maximum is not None else ""))
        raise ValueError(f"{name} must be {allowed}, got {shown(value)}")
    return int(value)


def check_number(name: str, value, minimum: float | None = None) -> float:
    """``value`` as a finite float (>= ``minimum`` when given); ValueError otherwise."""
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating))
            or not math.isfinite(float(value)) or (minimum is not None and value < minimum)):
        allowed = "a finite number" + (f" >= {minimum:g}" if minimum is not None else "")
        raise ValueError(f"{name} must be {allowed}, got {shown(value)}")
    return float(value)


def check_flag(name: str, value) -> bool:
    """``value`` as a bool (numpy booleans too); ValueError for anything else (1, "yes")."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_choice(name: str, value, choices) -> None:
    """ValueError naming the option and its allowed values unless ``value`` is one of ``choices``."""
    if not any(value is choice or (isinstance(value, str) and value == choice) for choice in choices):
        raise ValueError(f"unknown {name} {value!r}; choose one of {tuple(choices)}")


def as_seed(seed) -> int | None:
    """A reset seed: None or an int >= 0; anything else (a Generator, a float) is a ValueError."""
    if seed is None:
        return None
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")
    return int(seed)


def check_reset_options(options, known: tuple[str, ...] = ()) -> dict:
    """A reset's ``options``: None or a dict whose keys are all in ``known``; anything else is a ValueError."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"options must be a dict or None, got {shown(options)}")
    unknown = sorted(map(str, set(options) - set(known)))
    if unknown:
        raise ValueError(f"unknown reset option(s) {unknown}; this environment's reset takes "
                         f"{list(known) if known else 'none'}")
    return options
