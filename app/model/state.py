"""Every choice a learner can make, for one browser session.

``ExplorerState`` is a plain ``param.Parameterized`` with no Panel import: the
widgets are generated from its parameters, the views watch it, and the URL is
parsed into it. The constraints between parameters live here and nowhere else:

* ``d_model`` is even, 2 .. 1024; ``T`` is 1 .. 2048;
* ``pair`` is 0 .. d_model/2 - 1;
* ``pos`` is 0 .. T-1 and the offset ``k`` is -(T-1) .. T-1;
* ``base`` is one of the log-spaced values of ``BASES``;
* the fingerprint's pairs ``pairs_from`` <= ``pairs_to``, both 0 .. d_model/2 - 1
  (moving one past the other pushes the other along; a range that reached the
  last pair keeps reaching it when d_model changes);
* ``reserve`` (coordinates kept for position under concatenation) is even,
  0 .. d_model, and keeps its share of d_model when d_model changes;
* ``mistake`` is one of ``app.model.core.MISTAKES`` ("none", the correct encoding, by default);
* ``T_train`` (the training length of the extrapolation section) is 1 .. T: a text is never shorter
  than the texts the model was trained on. It follows ``T`` down when ``T`` shrinks below it (as
  ``pos`` does), and stays where it is when ``T`` grows; an address with ``T_train > T`` is read as
  ``T_train = T``, with a notice;
* ``sentence`` has at most ``MAX_WORDS`` words of at most ``MAX_WORD_LENGTH``
  characters ("" means the lesson's sentence in the page's language).

When ``d_model`` or ``T`` shrinks, ``pair``, ``pos`` and ``k`` are clamped into
their new ranges before the ranges themselves change, so no observer ever sees
a value outside its bounds.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import param

from app.model.core import MISTAKES

D_MODEL_MAX = 1024
T_MAX = 2048
#: 1-2-5 steps, so the slider moves evenly on a log scale; 10000 is the paper's.
BASES: tuple[int, ...] = (
    2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000,
    10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000,
)

#: One-click sizes. "lesson" is the first lesson's NumPy cells (d_model=32, T=24);
#: "paper" is the Transformer base model's d_model with a text-length T.
PRESETS: dict[str, dict[str, int]] = {
    "lesson": {"d_model": 32, "T": 24, "base": 10_000, "pair": 0, "pos": 0, "k": 3},
    "paper": {"d_model": 512, "T": 512, "base": 10_000, "pair": 0, "pos": 0, "k": 3},
    "largest": {"d_model": D_MODEL_MAX, "T": T_MAX, "base": 10_000, "pair": 0, "pos": 0, "k": 3},
}

LANGUAGES = ("es", "en")
#: How the lesson's query and key weights are drawn (section "score"): seeded random, or
#: aligned so that the position-position term depends on the distance only.
HEADS = ("random", "aligned")
#: The stretched ladders of the extrapolation section, in the order of their papers: Position Interpolation,
#: "NTK-aware" scaling, YaRN (``app.model.core.extrapolation``).
STRETCHES = ("interpolation", "ntk", "yarn")
MAX_WORDS = 12
MAX_WORD_LENGTH = 24

#: Parameters that travel in the query string, in the order they are written there.
VIEW_PARAMETERS = ("d_model", "T", "base", "pair", "pos", "k")
LESSON_PARAMETERS = ("pairs_from", "pairs_to", "heads", "reserve", "sentence", "mistake", "T_train", "stretch")
#: How the page is shown (not what it shows): which controls an embedded page shows, presentation mode,
#: its slide, the theme, the animation. Written into the address only when they differ from their defaults.
PAGE_PARAMETERS: tuple[str, ...] = ("controls", "present", "slide", "theme", "play", "speed", "loop", "play_k")
#: What ``controls=`` may list (an embedded page shows those controls only): the sliders and option
#: groups, and ``play`` (the page's play control); ``none`` alone shows no control. In this order.
CONTROL_NAMES: tuple[str, ...] = (*VIEW_PARAMETERS, *LESSON_PARAMETERS, "play")
THEMES = ("light", "dark")
#: Play speeds, in steps of pos per second (``+`` and ``-`` walk this list).
SPEEDS: tuple[int, ...] = (1, 2, 3, 5, 8, 12, 20)
#: A slide's name: a lesson section's slug or a view's name (the page checks it against its own).
SLIDE_PATTERN = re.compile(r"^[a-z][a-z_]{0,39}$")
#: Parameters that ``ExplorerState.query`` leaves out while they are empty.
LEFT_OUT_WHEN_EMPTY = ("sentence", "follow")
#: How "yes" and "no" may be written in the address.
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")
#: Following a teacher's room.
ROOM_PARAMETERS: tuple[str, ...] = ("follow",)
#: A room id: six characters without look-alikes (see components.roombus, which makes them).
ROOM_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
ROOM_ID_LENGTH = 6
URL_PARAMETERS = (*VIEW_PARAMETERS, *LESSON_PARAMETERS, *PAGE_PARAMETERS, *ROOM_PARAMETERS, "lang")


class BoundedInteger(param.Integer):
    """An ``Integer`` that takes a value past its bounds as the nearest bound, instead of refusing it.

    The one place a value is clamped: the bounds of ``pair``, ``pos``, ``k`` … move with the sizes, and
    whatever sets them (a slider drawn with older bounds, a key press at an end, a teacher's state) gets
    the state's own answer. The URL is read by ``parse_query``, which says what it changed.
    """

    def __set__(self, obj, val):
        if obj is not None and isinstance(val, int) and not isinstance(val, bool):
            val = obj.param[self.name].crop_to_bounds(val)
        super().__set__(obj, val)


class EvenInteger(BoundedInteger):
    """A ``BoundedInteger`` that refuses odd values (d_model holds pairs)."""

    def _validate_value(self, val, allow_None):
        super()._validate_value(val, allow_None)
        if val is not None and val % 2:
            raise ValueError(f"{self.name} must be even; got {val}")


class ExplorerState(param.Parameterized):
    """The explorable's state: sizes, the selected pair, position and offset."""

    d_model = EvenInteger(default=32, bounds=(2, D_MODEL_MAX), step=2, doc=(
        "Width of the encoding: the number of coordinates, two per pair."))
    T = param.Integer(default=24, bounds=(1, T_MAX), doc=(
        "Number of positions in the table (rows of PE)."))
    base = param.Selector(default=10_000, objects=list(BASES), doc=(
        "The base of the geometric ladder; the last pair's wavelength is just below 2*pi*base."))
    pair = BoundedInteger(default=0, bounds=(0, 15), doc="Selected pair i (coordinates 2i and 2i+1).")
    pos = BoundedInteger(default=0, bounds=(0, 23), doc="Selected position.")
    k = BoundedInteger(default=3, bounds=(-23, 23), doc="Offset: the second position is pos + k.")
    pairs_from = BoundedInteger(default=0, bounds=(0, 15), doc="First pair taking part in the fingerprint.")
    pairs_to = BoundedInteger(default=15, bounds=(0, 15), doc="Last pair taking part in the fingerprint.")
    heads = param.Selector(default="random", objects=list(HEADS), doc=(
        "Query and key weights of the score section: seeded random, or aligned (a scaled rotation per pair)."))
    reserve = EvenInteger(default=4, bounds=(0, 32), step=2, doc=(
        "Coordinates kept for position if PE were concatenated instead of summed."))
    sentence = param.String(default="", doc="The sentence of the first section; empty: the lesson's.")
    mistake = param.Selector(default="none", objects=list(MISTAKES), doc=(
        "A published bug applied to the table the views draw (core.mistake_columns); 'none' is the encoding."))
    T_train = BoundedInteger(default=12, bounds=(1, 24), doc=(
        "Training length of the extrapolation section: the model saw positions 0 .. T_train-1; T_train <= T."))
    stretch = param.Selector(default="interpolation", objects=list(STRETCHES), doc=(
        "The stretched ladder the extrapolation section draws against the trained one (STRETCHES)."))
    lang = param.Selector(default="es", objects=list(LANGUAGES), doc="Language of the interface.")
    controls = param.String(default="", doc=(
        "Which controls the page shows, comma separated (CONTROL_NAMES, or 'none'); empty: all of them."))
    follow = param.String(default="", doc=(
        "The room whose teacher this page follows (components.roombus); empty: none. Never part of what a room sends."))
    present = param.Boolean(default=False, doc="Presentation mode: one section or view at a time, large type.")
    slide = param.String(default="", doc="The section or view shown in presentation mode; empty: the page's first.")
    theme = param.Selector(default="light", objects=list(THEMES), doc="Light or dark high-contrast colours.")
    play = param.Boolean(default=False, doc="Whether the animation runs (pos, and k when play_k).")
    speed = param.Selector(default=3, objects=list(SPEEDS), doc="Animation speed, steps of pos per second.")
    loop = param.Boolean(default=True, doc="At the end of pos the animation starts again (else it stops).")
    play_k = param.Boolean(default=False, doc="The animation also runs k (from -(T-1) up) once pos has run.")

    lesson_preset = param.Action(lambda self: self.apply_preset("lesson"))
    paper_preset = param.Action(lambda self: self.apply_preset("paper"))

    def __init__(self, **params):
        # pair/pos/k are checked against bounds that depend on the sizes, so
        # they are set only once the sizes (and so the bounds) are in place.
        dependent = {key: params.pop(key) for key in ("pair", "pos", "k", "pairs_from", "pairs_to", "reserve",
                                                      "T_train") if key in params}
        d_model = params.get("d_model", type(self).param.d_model.default)
        dependent.setdefault("pairs_to", d_model // 2 - 1)
        dependent.setdefault("reserve", even_share(d_model, 1, 8))
        super().__init__(**params)
        #: The session's page-wide objects that need finding from the state (its address bar, its animation,
        #: the lesson's sections due to catch up), by kind. Held by the state itself, so they go with it: in a
        #: module-level WeakKeyDictionary each would keep its state, and so its session, alive for good (a
        #: dictionary's values are strong, and each of these refers back to its key).
        self.parts: dict[str, object] = {}
        self._d_model_seen = self.d_model
        self._sync_bounds()
        self.param.update(dependent)

    @param.depends("d_model", "T", watch=True)
    def _sync_bounds(self) -> None:
        pair_max, last_pos = self.d_model // 2 - 1, self.T - 1
        old_d_model, self._d_model_seen = self._d_model_seen, self.d_model
        # A fingerprint over every pair stays over every pair; a reserve keeps its share of the width.
        pairs_to = pair_max if self.pairs_to == old_d_model // 2 - 1 else min(self.pairs_to, pair_max)
        reserve = min(even_share(self.reserve, self.d_model, old_d_model), self.d_model)
        bounds = {"pair": (0, pair_max), "pos": (0, last_pos), "k": (-last_pos, last_pos),
                  "pairs_from": (0, pair_max), "pairs_to": (0, pair_max), "reserve": (0, self.d_model),
                  "T_train": (1, self.T)}
        # Values that shrink first, then the bounds, then values that grow: at every
        # moment the values lie inside the bounds an observer can see.
        with param.parameterized.batch_call_watchers(self):
            set_together(self, {
                "pair": min(self.pair, pair_max),
                "pos": min(self.pos, last_pos),
                "k": max(-last_pos, min(self.k, last_pos)),
                "pairs_from": min(self.pairs_from, pairs_to),
                "pairs_to": min(self.pairs_to, pairs_to),
                "reserve": min(self.reserve, reserve),
                "T_train": min(self.T_train, self.T),
            })
            for name, limits in bounds.items():
                if self.param[name].bounds != limits:
                    self.param[name].bounds = limits
            set_together(self, {"pairs_to": pairs_to, "reserve": reserve})

    @param.depends("sentence", watch=True)
    def _clean_sentence(self) -> None:
        self.sentence = clean_sentence(self.sentence)

    @param.depends("pairs_from", watch=True)
    def _push_pairs_to(self) -> None:
        if self.pairs_to < self.pairs_from:
            self.pairs_to = self.pairs_from

    @param.depends("pairs_to", watch=True)
    def _push_pairs_from(self) -> None:
        if self.pairs_from > self.pairs_to:
            self.pairs_from = self.pairs_to

    def apply_preset(self, name: str) -> None:
        """Switch to one of ``PRESETS`` in one step."""
        values = PRESETS[name]
        # Sizes first so the bounds of pair/pos/k are right before they are set.
        self.param.update({key: values[key] for key in ("d_model", "T", "base")})
        self.param.update({key: values[key] for key in ("pair", "pos", "k")})

    @property
    def target(self) -> int:
        """The second position, ``pos + k``; it may fall outside 0 .. T-1."""
        return self.pos + self.k

    def query(self) -> dict[str, str]:
        """The query-string form of the state (inverse of ``parse_query``).

        No ``sentence`` while it is the lesson's, no ``follow`` while the page follows no room, and the
        page's parameters only where they differ from their defaults (a plain link stays short).
        """
        query = {}
        for name in URL_PARAMETERS:
            value = getattr(self, name)
            if name in LEFT_OUT_WHEN_EMPTY and not value:
                continue
            if name in PAGE_PARAMETERS:
                if value == self.param[name].default:
                    continue
                value = int(value) if isinstance(value, bool) else value
            query[name] = str(value)
        return query

    def shows(self, control: str) -> bool:
        """Whether the page shows ``control`` (a name of ``CONTROL_NAMES``) under ``controls=``."""
        return not self.controls or control in self.controls.split(",")

    def words(self) -> list[str]:
        """The words of ``sentence``, or ``[]`` when it is the lesson's default."""
        return self.sentence.split()


@dataclass(frozen=True)
class Notice:
    """A value from outside (a URL) that could not be used as given.

    ``given`` is the raw text, kept for the message; it must be escaped by
    whoever puts it in a page.
    """

    parameter: str
    given: str
    used: str
    reason: str  # "not_a_number" | "rounded" | "out_of_range" | "odd" | "not_allowed" | "off_grid" | "below_from"
    #              | "above_T" | "sentence_cut" | "not_a_room" | "repeated"


def clean_sentence(text: str) -> str:
    """``text`` as at most ``MAX_WORDS`` words of at most ``MAX_WORD_LENGTH`` printable characters, one space apart."""
    words = ("".join(ch for ch in word if ch.isprintable())[:MAX_WORD_LENGTH] for word in str(text).split())
    return " ".join([word for word in words if word][:MAX_WORDS])


def sentence_cut(given: str) -> Notice | None:
    """The notice for a sentence that ``clean_sentence`` cuts (words, length, control characters), or ``None``
    when it keeps all of it (spaces aside)."""
    kept = clean_sentence(given)
    return None if kept == " ".join(str(given).split()) else Notice("sentence", str(given), kept, "sentence_cut")


def set_together(state: param.Parameterized, values: Mapping[str, object]) -> None:
    """Set those of ``values`` that differ from ``state``'s, its watchers called once for all of them.

    What ``state.param.update(values)`` does, less its record of the old values (a read of every
    parameter, on each of the several updates a size step makes) and less the watchers' calls for a
    value set to what it already is.
    """
    with param.parameterized.batch_call_watchers(state):
        for name, value in values.items():
            if getattr(state, name) != value:
                setattr(state, name, value)


def even_share(value: int, numerator: int, denominator: int) -> int:
    """``value * numerator / denominator`` rounded to the nearest even integer (halves go down)."""
    return 2 * math.floor(value * numerator / denominator / 2 + 0.5 - 1e-9)


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))


def repeated_parameters(args: Mapping[str, Sequence[str]]) -> list[Notice]:
    """A notice for each parameter of ``URL_PARAMETERS`` given more than once with different values
    (``?pos=3&pos=9``): only the first is read, and the reader should know which."""
    return [Notice(name, ", ".join(values), values[0], "repeated") for name in URL_PARAMETERS
            if len(set(values := list(args.get(name, ())))) > 1]


def parse_query(args: Mapping[str, str], default_lang: str = "es") -> tuple[dict[str, object], list[Notice]]:
    """Turn raw query-string values into valid state values and notices.

    Every parameter of ``URL_PARAMETERS`` that is present is read; anything
    that is not a number, out of range, odd (``d_model``) or not one of the
    allowed values is replaced by the nearest valid value (or the default,
    when there is no nearest) and reported in a ``Notice``. Unknown keys are
    ignored. A number written another way ("1e3", "+5") is used as it is;
    a fractional one is rounded with a notice. An unknown ``lang`` falls back
    to ``default_lang`` (the browser's language, for a page). The result can
    be passed to ``ExplorerState(**values)``.
    """
    values: dict[str, object] = {}
    notices: list[Notice] = []
    defaults = ExplorerState.param

    def note(name: str, given: str, used: object, reason: str) -> None:
        notices.append(Notice(name, given, str(used), reason))

    def integer(name: str, low: int, high: int) -> None:
        if name not in args:
            return
        given = args[name]
        number = _to_float(given)
        if number is None:
            used = _clamp(defaults[name].default, low, high)
            note(name, given, used, "not_a_number")
        else:
            used = _clamp(round(number), low, high)
            if not low <= number <= high:
                note(name, given, used, "out_of_range")
            elif used != number:
                note(name, given, used, "rounded")
        values[name] = used

    def choice(name: str, allowed: Sequence[str], fallback: str | None = None) -> None:
        """One of ``allowed`` (any case, spaces around ignored); else ``fallback`` or the default, with a notice."""
        if name not in args:
            return
        given = args[name].strip().lower()
        values[name] = given if given in allowed else (fallback or defaults[name].default)
        if given not in allowed:
            note(name, args[name], values[name], "not_allowed")

    def even(name: str, used: int) -> None:
        """Use the even ``used`` for an odd value of ``name``: one notice, with the value really used."""
        # "32.6" already got a "rounded" notice (used 33): correct that one instead of adding a second.
        earlier = [n for n in notices if n.parameter == name]
        if earlier:
            notices[notices.index(earlier[0])] = replace(earlier[0], used=str(used))
        else:
            note(name, args[name], used, "odd")
        values[name] = used

    integer("T", 1, T_MAX)
    integer("d_model", 2, D_MODEL_MAX)
    if values.get("d_model", 0) % 2:
        even("d_model", values["d_model"] + 1 if values["d_model"] < D_MODEL_MAX else values["d_model"] - 1)

    if "base" in args:
        number = _to_float(args["base"])
        if number is None:
            values["base"] = defaults["base"].default
            note("base", args["base"], values["base"], "not_a_number")
        elif number <= 0:
            values["base"] = BASES[0]
            note("base", args["base"], BASES[0], "out_of_range")
        else:
            nearest = min(BASES, key=lambda b: abs(math.log(b) - math.log(number)))
            values["base"] = nearest
            if nearest != number:
                note("base", args["base"], nearest, "off_grid")

    d_model = values.get("d_model", defaults["d_model"].default)
    T = values.get("T", defaults["T"].default)
    integer("pair", 0, d_model // 2 - 1)
    integer("pos", 0, T - 1)
    integer("k", -(T - 1), T - 1)
    integer("pairs_from", 0, d_model // 2 - 1)
    integer("pairs_to", 0, d_model // 2 - 1)
    if values.get("pairs_from", 0) > values.get("pairs_to", d_model // 2 - 1):
        # Only a given pairs_to can lie below pairs_from (the default is the last pair); one notice for it.
        values["pairs_to"] = values["pairs_from"]
        notices[:] = [n for n in notices if n.parameter != "pairs_to"]
        note("pairs_to", args["pairs_to"], values["pairs_to"], "below_from")
    integer("reserve", 0, d_model)
    # A training length past the text's own: T_train = T (no extrapolation), said in its own words, not as
    # "out of range" (the number is a valid length, just not next to this T).
    integer("T_train", 1, T)
    if "T_train" in values and (given_train := _to_float(args["T_train"])) is not None and T < given_train <= T_MAX:
        notices[:] = [n for n in notices if n.parameter != "T_train"]
        note("T_train", args["T_train"], values["T_train"], "above_T")
    if values.get("reserve", 0) % 2:
        even("reserve", values["reserve"] - 1)

    choice("heads", HEADS)
    choice("mistake", MISTAKES)
    choice("stretch", STRETCHES)
    if "sentence" in args:
        values["sentence"] = clean_sentence(args["sentence"])
        if (cut := sentence_cut(args["sentence"])) is not None:
            notices.append(cut)

    if "controls" in args:
        values["controls"], bad = clean_controls(args["controls"])
        if bad:
            note("controls", args["controls"], values["controls"], "controls")
    if "follow" in args:
        # Written like a room id (any case, spaces around ignored), or dropped with a notice; whether
        # the room exists is the room box's to say (it may have closed since the link was shared).
        given = args["follow"].strip().lower()
        values["follow"] = given if valid_room_id(given) else ""
        if given and not values["follow"]:
            note("follow", args["follow"], "", "not_a_room")

    def flag(name: str) -> None:
        if name not in args:
            return
        given = args[name].strip().lower()
        values[name] = given in TRUE_WORDS if given in TRUE_WORDS + FALSE_WORDS else defaults[name].default
        if given not in TRUE_WORDS + FALSE_WORDS:
            note(name, args[name], int(values[name]), "not_allowed")

    for name in ("present", "play", "loop", "play_k"):
        flag(name)
    if "slide" in args:
        given = args["slide"].strip().lower()
        values["slide"] = given if SLIDE_PATTERN.match(given) or not given else ""
        if values["slide"] != given:
            note("slide", args["slide"], values["slide"], "not_allowed")
    choice("theme", THEMES)
    if "speed" in args:
        number = _to_float(args["speed"])
        nearest = SPEEDS[2] if number is None else min(SPEEDS, key=lambda s: (abs(s - number), s))
        values["speed"] = nearest
        if nearest != number:
            note("speed", args["speed"], nearest, "not_a_number" if number is None else "off_grid")

    choice("lang", LANGUAGES, fallback=default_lang)
    return values, notices


def clean_controls(given: str) -> tuple[str, bool]:
    """``controls=`` as its canonical text (names of ``CONTROL_NAMES`` in that order, or ``none``; ``""``: all),
    and whether something had to be dropped (an unknown name, ``none`` next to names). Order, case and
    spaces are free: ``k,pos`` and ``POS, k`` both give ``pos,k``."""
    by_lower = {name.lower(): name for name in CONTROL_NAMES}
    tokens = [token.strip() for token in str(given).split(",") if token.strip()]
    known = {by_lower[t.lower()] for t in tokens if t.lower() in by_lower}
    wants_none = any(t.lower() == "none" for t in tokens)
    unknown = [t for t in tokens if t.lower() not in by_lower and t.lower() != "none"]
    if wants_none and not known:
        return "none", bool(unknown)
    used = ",".join(name for name in CONTROL_NAMES if name in known)
    return used, bool(unknown) or wants_none
def valid_room_id(text: object) -> bool:
    """Whether ``text`` is written like a room id (``ROOM_ID_LENGTH`` characters of ``ROOM_ALPHABET``)."""
    return isinstance(text, str) and len(text) == ROOM_ID_LENGTH and all(ch in ROOM_ALPHABET for ch in text)


#: What a reader may put between a room code's characters when typing it off a screen: spaces and dashes.
_CODE_SEPARATORS = re.compile(r"[\s\-\u2010-\u2015\u2212]+")


def room_code(typed: object) -> str:
    """The room id a reader typed, or "" when it is not written like one.

    Case, spaces and dashes do not count ("AB3 K9X" is ``ab3k9x``); a phone's full-width letters are read as
    letters (NFKC). No look-alike is mended: the alphabet has none of 0, o, 1, i, l, so each would be a guess
    between two characters that are both missing, and a guessed room may be someone else's.
    """
    if not isinstance(typed, str):
        return ""
    code = _CODE_SEPARATORS.sub("", unicodedata.normalize("NFKC", typed[:64])).lower()
    return code if valid_room_id(code) else ""


def _to_float(text: str) -> float | None:
    try:
        # The page prints negative numbers with U+2212 MINUS SIGN (app.model.strings.minus_sign): one copied
        # from it into an address is read as the number it shows.
        number = float(text.replace("\u2212", "-"))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


#: The parameters that move the others' bounds: set before the others when values arrive together.
SIZE_PARAMETERS = ("d_model", "T", "base")


def preferred_language(headers: Mapping[str, object]) -> str:
    """The first of ``LANGUAGES`` named in an Accept-Language header; Spanish otherwise."""
    accept = str(headers.get("Accept-Language", "") or "")
    for part in accept.split(","):
        code = part.split(";")[0].strip().lower()[:2]
        if code in LANGUAGES:
            return code
    return "es"
