"""The HTTP server (started by serve.py) collects the young generation less often (see transports/http/collector.py)."""

from __future__ import annotations

import argparse
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from iac_code import serve as start_up
from iac_code.config import Settings
from iac_code.transports.http.collector import YOUNG_COLLECTION_EVERY, pace_collector_for_serving


@pytest.fixture
def threshold() -> Iterator[None]:
    saved = gc.get_threshold()
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def test_young_collections_are_spaced_out_and_never_made_more_frequent(threshold):
    gc.set_threshold(700, 10, 10)
    pace_collector_for_serving()
    assert gc.get_threshold() == (YOUNG_COLLECTION_EVERY, 10, 10)
    gc.set_threshold(YOUNG_COLLECTION_EVERY * 5, 3, 4)
    pace_collector_for_serving()
    assert gc.get_threshold() == (YOUNG_COLLECTION_EVERY * 5, 3, 4)


def test_run_http_serves_with_the_spaced_out_collector(threshold, monkeypatch, tmp_path: Path):
    gc.set_threshold(700, 10, 10)
    seen: list[tuple[int, int, int]] = []

    async def serve(args, settings, options, listener) -> None:
        seen.append(gc.get_threshold())
        listener.close()

    monkeypatch.setattr(start_up, "_serve_http", serve)
    args = argparse.Namespace(
        host="127.0.0.1",
        port=0,
        allowed_origin=[],
        allowed_host=[],
        max_body_bytes=1024,
        idle_timeout=60.0,
        max_connections=10,
        allow_insecure_bind=False,
        insecure_jwks=False,
    )
    assert start_up.run_http(args, Settings(config_dir=tmp_path)) == 0
    assert seen == [(YOUNG_COLLECTION_EVERY, 10, 10)]
