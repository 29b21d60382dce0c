"""The ablation benchmark's variants: which patches each turns off (issue #43's fewest-names runs)."""

from __future__ import annotations

import pytest

from bench.ablation import _variant_env, main
from components.internals import PATCHES


def test_one_patch_off_and_stock_name_their_switches():
    assert _variant_env("cached defaults") == {"PE_OFF": "cached defaults"}
    assert _variant_env("stock") == {"PE_STOCK": "1"}


def test_an_only_variant_keeps_its_patches_and_turns_every_other_off():
    env = _variant_env("only fast widgets+no debounce+slider keys")
    off = env["PE_OFF"].split(",")
    assert set(off) == set(PATCHES) - {"fast widgets", "no debounce", "slider keys"}
    assert len(off) == len(PATCHES) - 3


def test_a_misspelt_patch_in_an_only_variant_is_refused_before_anything_runs(capsys):
    with pytest.raises(SystemExit):
        main(["--patches", "only fast widgets+no debunce", "--no-doc"])
    assert "no debunce" in capsys.readouterr().err
