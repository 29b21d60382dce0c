"""The colours that carry meaning stay apart for readers with protanopia, deuteranopia or tritanopia, text
colours reach WCAG AA contrast, and where two things differ in colour they differ in something else too.

Colour-vision deficiency is simulated with the matrices of Machado, Oliveira and Fernandes, "A
Physiologically-based Model for Simulation of Color Vision Deficiency", IEEE TVCG 15(6), 2009 (severity 1.0,
the full dichromacy; the authors' table at https://www.inf.ufrgs.br/~oliveira/pubs_files/CVD_Simulation/
CVD_Simulation.html), applied to linear sRGB. Differences are CIE 1976 ΔE*ab in CIELAB (D65): about 2.3 is
"just noticeable", 10 clearly different at a glance; 20 is asked where colour is the main cue.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from bokeh.palettes import RdBu11

from components.distance import SLOT_COLORS, SLOT_MARKERS
from components.theme import COLORS

MACHADO_2009 = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868],
                            [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968],
                              [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779],
                            [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}

#: sRGB (D65) to XYZ, IEC 61966-2-1.
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
D65 = np.array([0.95047, 1.0, 1.08883])


def linear_rgb(colour: str) -> np.ndarray:
    """``#RRGGBB`` to linear sRGB in [0, 1] (the sRGB transfer function undone)."""
    c = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lab(linear: np.ndarray) -> np.ndarray:
    """Linear sRGB to CIELAB (D65)."""
    t = SRGB_TO_XYZ @ np.clip(linear, 0.0, 1.0) / D65
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a: str, b: str, matrix: np.ndarray | None = None) -> float:
    """ΔE*ab between two colours as seen through ``matrix`` (none: normal vision)."""
    m = np.eye(3) if matrix is None else matrix
    return float(np.linalg.norm(lab(m @ linear_rgb(a)) - lab(m @ linear_rgb(b))))


def contrast(a: str, b: str = "#FFFFFF") -> float:
    """WCAG 2 contrast ratio of two colours."""
    la, lb = (float(np.array([0.2126, 0.7152, 0.0722]) @ linear_rgb(c)) for c in (a, b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def test_the_simulation_is_sane():
    # White and black stay themselves; red and green, far apart for normal vision, come close for
    # a protanope and a deuteranope but not for a tritanope.
    for matrix in MACHADO_2009.values():
        assert delta_e("#FFFFFF", "#000000", matrix) > 99
    assert delta_e("#D62728", "#2CA02C") > 70
    assert delta_e("#D62728", "#2CA02C", MACHADO_2009["deuteranopia"]) < 25
    assert delta_e("#D62728", "#2CA02C", MACHADO_2009["tritanopia"]) > 50
    assert round(contrast("#767676"), 2) == 4.54  # the usual "lightest grey for text" check


#: Pairs of colours that tell two things apart, and the ΔE each must keep under every deficiency: 20 where
#: colour is the main cue; 10 where the figure also differs in shape, outline or a label (said why).
MEANINGFUL = {
    "pos and pos + k hands": (COLORS["pos"], COLORS["target"], 20),
    "selected pair and the other bars (also a dark outline and a larger face)": (COLORS["selected"], COLORS["bar"], 10),
    "selected pair (a face's ring) and the pos hand": (COLORS["selected"], COLORS["pos"], 10),
    "selected pair and the pos + k hand": (COLORS["selected"], COLORS["target"], 20),
    "heatmap: −1 and +1 ends (also told by the colour bar's numbers)": (RdBu11[0], RdBu11[-1], 20),
    "heatmap: −1 end and 0": (RdBu11[0], RdBu11[5], 20),
    "heatmap: +1 end and 0": (RdBu11[-1], RdBu11[5], 20),
    **{f"sample starts {i} and {j} (also a different marker shape)": (SLOT_COLORS[i], SLOT_COLORS[j], 10)
       for i, j in itertools.combinations(range(len(SLOT_COLORS)), 2)},
}


@pytest.mark.parametrize("deficiency", sorted(MACHADO_2009))
@pytest.mark.parametrize("meaning", sorted(MEANINGFUL))
def test_meaningful_colours_stay_apart(meaning, deficiency):
    a, b, least = MEANINGFUL[meaning]
    assert delta_e(a, b) >= least
    assert delta_e(a, b, MACHADO_2009[deficiency]) >= least, (meaning, deficiency)


def test_sample_starts_differ_in_shape_too():
    assert len(set(SLOT_MARKERS)) == len(SLOT_MARKERS) == len(SLOT_COLORS)


@pytest.mark.parametrize("role", ["ink", "pos_text", "target_text", "selected_text"])
def test_text_colours_reach_aa_contrast_on_white(role):
    assert contrast(COLORS[role]) >= 4.5


def test_text_colours_keep_their_roles_hue():
    # The darker text colours are the same colour family as the glyphs they name (hue within 25°).
    for role in ("pos", "target", "selected"):
        glyph, text_colour = lab(linear_rgb(COLORS[role])), lab(linear_rgb(COLORS[f"{role}_text"]))
        hue = np.degrees(np.arctan2(glyph[2], glyph[1])) - np.degrees(np.arctan2(text_colour[2], text_colour[1]))
        assert abs((hue + 180) % 360 - 180) < 25, role


def test_page_accent_is_readable():
    from components.present import DARK_VARIABLES
    from components.stylesheets import STYLESHEET

    # The light theme's accent: the fallback of the theme variable (the dark theme sets --pe-t-accent).
    declared = STYLESHEET.split("--pe-accent:")[1].split(";")[0]
    accent = re.search(r"#[0-9A-Fa-f]{6}", declared).group(0)
    assert contrast(accent) >= 4.5
    assert contrast("#FFFFFF", accent) >= 4.5  # white text on the accent (the link's focus and hover state)
    dark = DARK_VARIABLES["--pe-t-accent"]
    assert contrast(dark, "#212529") >= 4.5 and contrast("#212529", dark) >= 4.5  # the dark theme's page
