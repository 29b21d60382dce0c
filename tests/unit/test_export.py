"""CSV downloads (/data/<name>.csv): each file read over HTTP and compared with numbers derived here."""

from __future__ import annotations

import csv
import io
import json
import math
import urllib.error
import urllib.request

import numpy as np
import pytest

from app.model import core
from app.model.datasets import DATASETS


def download(app_url: str, name: str, query: str) -> tuple[str, list[list[str]], dict]:
    with urllib.request.urlopen(f"{app_url}/data/{name}.csv?{query}", timeout=60) as response:
        disposition = response.headers["Content-Disposition"]
        notices = json.loads(response.headers["X-PE-Notices"])
        rows = list(csv.reader(io.StringIO(response.read().decode("utf-8"))))
    return disposition.split('filename="')[1].rstrip('"'), rows, {"notices": notices}


def test_the_pe_table_is_whole_and_exact(app_url):
    d_model, T, base = 512, 300, 10_000
    file, rows, _ = download(app_url, "encoding", f"d_model={d_model}&T={T}&base={base}")
    assert file == "encoding_d512_T300_base10000.csv"
    assert rows[0] == ["pos", *(f"PE_{j}" for j in range(d_model))]
    table = np.array(rows[1:], dtype=np.float64)
    assert table.shape == (T, d_model + 1)  # every row, not the heatmap's sample
    assert (table[:, 0] == np.arange(T)).all()
    # By hand: column 2i = sin(pos / base^(2i/d)), 2i+1 = cos(...).
    pos = np.arange(T)[:, None]
    angle = pos / base ** (np.arange(0, d_model, 2) / d_model)
    assert np.allclose(table[:, 1::2], np.sin(angle), atol=1e-12)
    assert np.allclose(table[:, 2::2], np.cos(angle), atol=1e-12)
    # Full precision: the text reads back to app.core's float64 exactly.
    assert (table[:, 1:] == core.encoding(T, d_model, base)).all()


def test_scores_by_hand_and_the_query_is_clamped_with_notices(app_url):
    file, rows, extra = download(app_url, "scores", "d_model=7&T=9999&k=abc")
    assert file == "scores_d8_T2048_base10000.csv"
    assert {n[0] for n in extra["notices"]} == {"d_model", "T", "k"}
    table = np.array(rows[1:], dtype=np.float64)
    k = np.arange(-2047, 2048)
    assert (table[:, 0] == k).all()
    by_hand = sum(np.cos(k / 10_000 ** (2 * i / 8)) for i in range(4))
    assert np.allclose(table[:, 1], by_hand, atol=1e-9)
    assert math.isclose(table[2047, 1], 4.0)  # S(0) = d_model / 2


def test_a_parameter_given_twice_is_read_once_and_said(app_url):
    file, _, extra = download(app_url, "scores", "d_model=8&d_model=16&T=9")
    assert file == "scores_d8_T9_base10000.csv"
    assert extra["notices"] == [["d_model", "8, 16", "8", "repeated"]]


@pytest.mark.parametrize("name", list(DATASETS))
def test_every_dataset_downloads_with_its_parameters_in_the_name(app_url, name):
    file, rows, _ = download(app_url, name, "d_model=16&T=12&pos=3&k=2&lang=en")
    assert file.startswith(name + "_") and file.endswith(".csv") and "d16" in file
    assert len(rows) >= 2 and all(len(row) == len(rows[0]) for row in rows)
    assert all(math.isfinite(float(v)) for row in rows[1:] for v in row)


def test_section_data_match_the_core(app_url):
    _, rows, _ = download(app_url, "fingerprint", "d_model=16&T=12&pos=3&pairs_from=2&pairs_to=5")
    pe = core.encoding(12, 16)
    by_hand = np.linalg.norm(pe[3, 4:12] - pe[:, 4:12], axis=1)
    assert np.allclose(np.array(rows[1:], dtype=float)[:, 1], by_hand)
    _, rows, _ = download(app_url, "rotation", "d_model=8&k=2")
    m = np.array(rows[1:], dtype=float)[:, 1:]
    small = core.encoding(12, 8)
    assert np.allclose(m @ small[3], small[5])  # M_k carries PE_3 to PE_5
    _, rows, _ = download(app_url, "gram", "d_model=16&T=12")
    assert np.allclose(np.array(rows[1:], dtype=float)[:, 1:], pe @ pe.T)


def test_an_unknown_table_is_a_404_without_echo(app_url):
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(f"{app_url}/data/nothing.csv", timeout=10)
    assert error.value.code == 404


def test_a_long_table_streams_whole_and_exact(app_url):
    """2048 rows go out in pieces (``ROWS_PER_PIECE``): every row arrives, in order, exact."""
    d_model, T = 64, 2048
    _, rows, _ = download(app_url, "encoding", f"d_model={d_model}&T={T}")
    assert len(rows) == T + 1 and rows[0][0] == "pos"
    table = np.array(rows[1:], dtype=float)
    assert table[:, 0].tolist() == list(range(T))
    pos = np.arange(T)[:, None]
    omega = 10_000.0 ** (-np.arange(0, d_model, 2) / d_model)
    np.testing.assert_array_equal(table[:, 1::2], np.sin(pos * omega))
    np.testing.assert_array_equal(table[:, 2::2], np.cos(pos * omega))


@pytest.mark.parametrize(("lang", "words"), [("es", "como mucho"), ("en", "at most")])
def test_a_table_past_the_cap_is_refused_with_a_sentence_not_a_file(app_url, lang, words):
    """The Gram matrix at T = 2048 has 2048 x (2048 + 1) numbers, past the cap: a 413 that says so."""
    from app.model.datasets import MAX_CELLS

    assert MAX_CELLS < 2048 * 2049
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(f"{app_url}/data/gram.csv?T=2048&d_model=64&lang={lang}", timeout=60)
    assert error.value.code == 413
    message = error.value.read().decode("utf-8")
    assert words in message and "4\u202f196\u202f352" in message and "Traceback" not in message
    # Under the cap, the same table downloads.
    _, rows, _ = download(app_url, "gram", "T=512&d_model=64")
    assert len(rows) == 513


def test_downloads_past_the_limit_at_once_wait_for_a_retry(app_url, monkeypatch):
    """With ``MAX_AT_ONCE`` downloads being written, the next is a 503 with Retry-After, in the reader's language."""
    from app import data_routes

    monkeypatch.setattr(data_routes, "_writing", data_routes.MAX_AT_ONCE)
    request = urllib.request.Request(f"{app_url}/data/scores.csv?T=24", headers={"Accept-Language": "en-GB,en"})
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=30)
    assert error.value.code == 503 and error.value.headers["Retry-After"] == "5"
    assert "try again" in error.value.read().decode("utf-8").lower()
    monkeypatch.setattr(data_routes, "_writing", 0)
    _, rows, _ = download(app_url, "scores", "T=24")
    assert len(rows) == 2 * 24
