"""Tile notation (docs/spec.md §1): parsing, formatting, count vectors and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator.errors import UserError
from simulator.kernel import tiles as T


def test_kind_layout():
    assert T.kind(0, 1) == 0 and T.kind(1, 1) == 9 and T.kind(2, 9) == 26
    assert [T.tile_str(k) for k in (0, 13, 26)] == ["1m", "5p", "9s"]
    assert T.tile_name_zh(13) == "五筒" and T.names_zh([26, 0]) == "一万 九条"


def test_parse_in_written_order_with_spaces():
    assert T.parse_tiles("12m 3p") == [0, 1, 11]
    assert T.parse_tiles("9s1m") == [26, 0]
    assert T.parse_tile("5p") == 13


@pytest.mark.parametrize(("text", "words"), [
    ("12", "no suit letter"),
    ("m12m", "no digits before it"),
    ("10m", "rank 0"),
    ("12z", "unexpected character 'z' at position 2"),
    ("11111m", "appears 5 times"),
])
def test_parse_errors_are_one_line_user_errors(text, words):
    with pytest.raises(T.TileError) as info:
        T.counts_from_str(text)
    assert isinstance(info.value, UserError) and words in str(info.value) and "\n" not in str(info.value)


def test_parse_tile_needs_exactly_one():
    with pytest.raises(T.TileError, match="expected one tile, got 2"):
        T.parse_tile("12m")


def test_counts_and_format():
    c = T.counts_from_str("55p123m9s")
    assert c.dtype == np.uint8 and c.shape == (27,) and c.sum() == 6 and c[13] == 2
    assert T.format_counts(c) == "123m55p9s"
    assert T.format_tiles([26, 0, 9]) == "1m1p9s"
    with pytest.raises(T.TileError, match="out of range"):
        T.to_counts([27])


@given(st.lists(st.integers(0, 26), max_size=40).filter(lambda ks: max(np.bincount(ks, minlength=27)) <= 4))
def test_format_parse_roundtrip(kinds):
    text = T.format_tiles(kinds)
    assert sorted(T.parse_tiles(text)) == sorted(kinds)
    assert np.array_equal(T.counts_from_str(text) if kinds else T.to_counts([]), T.to_counts(kinds))
