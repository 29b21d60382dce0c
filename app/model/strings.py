"""Every short user-visible string, one table per language, read from ``prose/<lang>/strings.toml``.

Views never hold literal text: they call ``text(lang, key, **values)``. Both
tables must have the same keys (a test checks it). Values are ``str.format``
templates; numbers are formatted by the caller's template, not here, except
that a negative number is printed with a true minus sign (``minus_sign``), and
that the format spec ``sub`` prints an integer as a subscript (``subscript``):
``"M{k:sub}"`` with k = −7 is "M₋₇", as the board writes M with k below.
"""

from __future__ import annotations

import math
import numbers
import re
import tomllib
from pathlib import Path

#: Where the tables live: ``prose/<lang>/strings.toml``, beside the lesson's prose, for a translator to edit.
STRINGS_DIR = Path(__file__).resolve().parent / "prose"


def _table(lang: str) -> dict[str, str]:
    with (STRINGS_DIR / lang / "strings.toml").open("rb") as file:
        table = tomllib.load(file)
    wrong = sorted(key for key, value in table.items() if not isinstance(value, str))
    if wrong:
        raise ValueError(f"prose/{lang}/strings.toml: {', '.join(wrong)} must be text between quotes")
    return table


ES: dict[str, str] = _table("es")
EN: dict[str, str] = _table("en")
TABLES: dict[str, dict[str, str]] = {"es": ES, "en": EN}


#: A printed number with a hyphen-minus for its sign: "-3", "-0.250", "-1,234.5", "-1.0e-05".
_NEGATIVE = re.compile(r"-(?=\d|\.\d)(?P<digits>[\d.,\u202f\u2009]*(?:e[-+]?\d+)?)")
#: A printed zero, in any of the decimals the app prints.
_ZERO = re.compile(r"0(?:\.0*)?(?:e[-+]?\d+)?")


def minus_sign(printed: str) -> str:
    """``printed`` with a true minus sign (U+2212) when the whole string is a negative number.

    A hyphen is a different character, shorter and set higher; a lesson in mathematics prints
    "k = −3". A number that prints as zero ("-0.00", the sign of a rounded tiny negative) loses
    its sign. Any other text is returned unchanged (a URL's "k=-3" stays one).
    """
    match = _NEGATIVE.fullmatch(printed)
    if match is None:
        return printed
    digits = match.group("digits")
    return digits if _ZERO.fullmatch(digits) else "\u2212" + digits


def number(value: float, decimals: int = 2) -> str:
    """A number for the prose: fixed decimals, thousands apart by a narrow space (as the lessons print them),
    a true minus sign."""
    return minus_sign(f"{value:,.{decimals}f}".replace(",", "\u202f"))


def significant(value: float, digits: int = 4) -> str:
    """``number`` with as many decimals as ``digits`` significant digits need: 0.0001778, 0.5236, 35.33."""
    if value == 0 or not math.isfinite(value):
        return number(value, 0)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return number(value, decimals)


def percent(share: float, decimals: int = 1) -> str:
    """``100 * share`` for the prose, with more decimals where rounding would print a share strictly
    between 0 and 1 as 0 or 100 (a claim the number would then contradict)."""
    for places in range(decimals, 10):
        if not 0 < share < 1 or round(100 * share, places) not in (0, 100):
            break
    return number(100 * share, places)


#: Unicode's subscript forms: every digit, the signs, the brackets, and the letters a subscript of this lesson
#: needs (p, k, m, n, i, r, s, o, …; Unicode has no subscript q, b, c, d, f, g, w, y, z).
SUBSCRIPTS = str.maketrans({
    **{str(digit): chr(0x2080 + digit) for digit in range(10)},
    "+": "\u208a", "-": "\u208b", "\u2212": "\u208b", "=": "\u208c", "(": "\u208d", ")": "\u208e",
    "a": "\u2090", "e": "\u2091", "o": "\u2092", "x": "\u2093", "h": "\u2095", "k": "\u2096", "l": "\u2097",
    "m": "\u2098", "n": "\u2099", "p": "\u209a", "s": "\u209b", "t": "\u209c", "i": "\u1d62", "j": "\u2c7c",
    "r": "\u1d63", "u": "\u1d64", "v": "\u1d65",
})


def subscript(value: int | str) -> str:
    """``value`` written below the line, in Unicode's subscript characters: 7 → "₇", −12 → "₋₁₂", "p+k" → "ₚ₊ₖ".

    A figure's title is plain text (no KaTeX), so "M_−7" and "PE_(p+k)" beside the prose's typeset
    $M_k$ read as code; these read as the board does. A character without a subscript form is refused
    (``ValueError``) rather than left on the line.
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = str(int(value))
    elif not isinstance(value, str):
        raise ValueError(f"subscript: an integer or text, not {value!r}")
    missing = sorted({char for char in value if ord(char) not in SUBSCRIPTS})
    if missing:
        raise ValueError(f"subscript: no subscript form for {''.join(missing)!r} in {value!r}")
    return value.translate(SUBSCRIPTS)


class _Number:
    """A number argument of ``text``: formatted as its template says, then given its minus sign."""

    __slots__ = ("value",)

    def __init__(self, value: numbers.Real) -> None:
        self.value = value

    def __format__(self, spec: str) -> str:
        # An exact zero in scientific notation is printed "0": "differs from the product by 0.0e+00" read as a
        # measurement, where the two are the same number.
        if spec.endswith(("e", "E")) and self.value == 0:
            return "0"
        if spec == "sub":
            return subscript(self.value)
        return minus_sign(format(self.value, spec))


def text(lang: str, key: str, **values: object) -> str:
    """The string ``key`` in language ``lang``, formatted with ``values`` (numbers with a minus sign)."""
    template = TABLES[lang][key]
    if not values:
        return template
    return template.format(**{name: _Number(value) if isinstance(value, numbers.Real) and not isinstance(value, bool)
                              else value for name, value in values.items()})


def positions(last: int) -> str:
    """The positions of a table whose last row is ``last``, as the texts print them: "0 … 23", or "0" alone
    for a one-row table (not the range "0 … 0")."""
    return "0" if last == 0 else f"0 … {last}"
