"""The hashing embedder (06 §5): tokeniser, features, hashing, calibration."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from mbank.memo.embedder import (
    STOP_WORDS_EN,
    STOP_WORDS_ES,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    cosine,
    tokenize,
)


def test_camel_case_is_split_before_folding() -> None:
    assert tokenize("parseConfigFile") == ["parse", "config", "file"]
    assert tokenize("getHTTP2Response") == ["get", "http2", "response"]


def test_accents_are_folded_so_spanish_words_stay_whole() -> None:
    assert tokenize("decisión índice") == ["decision", "indice"]
    assert HashingEmbedder().embed("decisión") == HashingEmbedder().embed("decision")


def test_underscore_stays_inside_a_token() -> None:
    assert tokenize("tune filter_thresholds now") == ["tune", "filter_thresholds"]


def test_stop_words_of_both_languages_and_single_letters_are_dropped() -> None:
    assert tokenize("The cache and the queue") == ["cache", "queue"]
    assert tokenize("también la caché y el índice") == ["cache", "indice"]
    assert tokenize("a e o y x") == []
    assert "also" in STOP_WORDS_EN and "tambien" in STOP_WORDS_ES


def test_unigrams_weigh_one_and_bigrams_one_half_with_sublinear_tf() -> None:
    e = HashingEmbedder()
    vec = e.embed("cache queue")
    raw = {e.bucket("cache"): 1.0, e.bucket("queue"): 1.0}
    raw[e.bucket("cache queue")] = raw.get(e.bucket("cache queue"), 0.0) + 0.5
    tf = {d: 1.0 + math.log(w) for d, w in raw.items()}
    norm = math.sqrt(sum(v * v for v in tf.values()))
    assert vec == pytest.approx({d: v / norm for d, v in tf.items()})


def test_repeated_features_grow_sublinearly() -> None:
    e = HashingEmbedder(ngrams=(1,))
    vec = e.embed("cache cache queue")
    ratio = vec[e.bucket("cache")] / vec[e.bucket("queue")]
    assert ratio == pytest.approx(1.0 + math.log(2.0))


def test_vectors_are_unit_length_and_empty_text_gives_nothing() -> None:
    e = HashingEmbedder()
    vec = e.embed("Fix null pointer in AuthService token refresh")
    assert math.isclose(sum(v * v for v in vec.values()), 1.0)
    assert 8 <= len(vec) <= 20
    assert e.embed("") == {}
    assert e.embed("the a of y") == {}


def test_signature_names_the_configuration() -> None:
    assert HashingEmbedder().signature == "hashing-v2/dim=4096/ngrams=1-2/fold=nfkd"
    assert HashingEmbedder().autolink_threshold == 0.15
    assert HashingEmbedder().seed_floor == 0.05


def test_invalid_configuration_is_refused() -> None:
    with pytest.raises(ValueError):
        HashingEmbedder(dim=32)
    with pytest.raises(ValueError):
        HashingEmbedder(ngrams=(0, 1))


SNAPSHOT_TEXT = "Fix race condition in the session store (src/db/pool.py)"


def test_dimensions_are_a_stable_blake2b_snapshot_across_processes() -> None:
    here = sorted(HashingEmbedder().embed(SNAPSHOT_TEXT))
    code = (
        "import json; from mbank.memo.embedder import HashingEmbedder; "
        f"print(json.dumps(sorted(HashingEmbedder().embed({SNAPSHOT_TEXT!r}))))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    )
    assert json.loads(other.stdout) == here
    assert here == [
        192, 395, 868, 1168, 1452, 1461, 1709, 1798, 1872, 2115, 2141, 2203, 2605, 2621, 3576,
        3829, 3931,
    ]  # fmt: skip


RELATED = [
    ("Fix null pointer in auth middleware", "Null pointer crash in the auth middleware"),
    ("Token refresh fails after expiry", "Refresh token expiry breaks login"),
    ("Slow query in the orders report", "Orders report query is slow"),
    ("Memory leak in the image resizer", "Image resizer leaks memory under load"),
    ("Add retry with backoff to webhook sender", "Webhook sender needs retry and backoff"),
    ("Race condition in session store", "Session store race condition on logout"),
    ("Migrate billing cron to the job scheduler", "Billing cron migration to scheduler"),
    ("Flaky test in checkout flow", "Checkout flow test is flaky on CI"),
    ("Corregir fuga de memoria en el redimensionador", "Fuga de memoria del redimensionador"),
    ("Decisión: usar Redis para la caché", "Decision sobre la cache con Redis"),
    ("Validar el esquema de configuración", "Validación del esquema de configuracion"),
    ("Índice de búsqueda desactualizado", "Reconstruir el indice de busqueda"),
    ("Error de zona horaria en el calendario", "Calendario con zona horaria incorrecta"),
]
UNRELATED = [
    ("Fix null pointer in auth middleware", "Translate the settings page to German"),
    ("Token refresh fails after expiry", "Resize thumbnails in the gallery"),
    ("Slow query in the orders report", "Upgrade the websocket library"),
    ("Memory leak in the image resizer", "Document the release process"),
    ("Add retry with backoff to webhook sender", "Rename the dashboard widget colours"),
    ("Race condition in session store", "Export invoices as PDF"),
    ("Migrate billing cron to the job scheduler", "Fix typo in onboarding email"),
    ("Flaky test in checkout flow", "Add dark mode toggle"),
    ("Corregir fuga de memoria en el redimensionador", "Traducir la página de ayuda"),
    ("Decisión: usar Redis para la caché", "Revisar permisos del repositorio"),
    ("Validar el esquema de configuración", "Actualizar el logotipo del sitio"),
    ("Índice de búsqueda desactualizado", "Preparar la demo para ventas"),
    ("Error de zona horaria en el calendario", "Optimizar imágenes de la portada"),
]


def test_calibration_related_pairs_clear_the_threshold_unrelated_do_not() -> None:
    e = HashingEmbedder()
    related = [cosine(e.embed(a), e.embed(b)) for a, b in RELATED]
    unrelated = [cosine(e.embed(a), e.embed(b)) for a, b in UNRELATED]
    assert len(related) >= 12 and len(unrelated) >= 12
    assert min(related) >= e.autolink_threshold > max(unrelated), (related, unrelated)


def test_dense_embedder_needs_the_semantic_extra() -> None:
    pytest.importorskip("sentence_transformers")
    embedder = SentenceTransformerEmbedder()  # pragma: no cover - extra not installed in CI
    assert embedder.sparse is False  # pragma: no cover
