"""Issue 19, findings 3, 4, 5 and 10: agent definitions as they are on disk now, broken definitions named with
their problem, no silent deletion at agent end, and a bounded store directory."""

from __future__ import annotations

import gc
from pathlib import Path

from cortex.store import open_store
from cortex.store.oxigraph import KEPT_OLD_LOGS
from cortex.vocab import Vocabulary


def test_store_opens_keep_a_bounded_number_of_old_rocksdb_logs(tmp_path: Path) -> None:
    path = tmp_path / "store"
    for _ in range(KEPT_OLD_LOGS + 5):
        backend = open_store(path, Vocabulary())
        backend.close()
        del backend
        gc.collect()
    old = sorted(path.glob("LOG.old.*"))
    assert 0 < len(old) <= KEPT_OLD_LOGS
    assert (path / "LOG").exists()
