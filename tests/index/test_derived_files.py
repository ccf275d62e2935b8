"""Fault injection on the derived files: for each file beside the store and each kind of damage, every operation
still succeeds and answers from an index that agrees with the store (rebuilt when needed). The store is the
truth; a derived file is never a reason to fail."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cortex import Cortex
from cortex.state import INDEX_DIR
from tests.conftest import open_agents, stored_memories


def damage_append_invalid_utf8(path: Path) -> None:
    with open(path, "ab") as fh:
        fh.write(b"\xff\xfe\x80")


def damage_junk_line(path: Path) -> None:
    with open(path, "ab") as fh:
        fh.write(b"\n}} not an id <urn:x> \x01\x02\n")


def damage_nul_fill(path: Path) -> None:
    path.write_bytes(b"\x00" * max(64, path.stat().st_size))


def damage_truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def damage_bit_flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    for at in range(len(data) // 3, len(data), max(1, len(data) // 7)):
        data[at] ^= 0x5A
    path.write_bytes(bytes(data))


def damage_directory(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "inside").write_text("a directory where a file belongs")


def damage_delete(path: Path) -> None:
    path.unlink()


DAMAGES: dict[str, Callable[[Path], None]] = {
    "invalid-utf8": damage_append_invalid_utf8,
    "junk-line": damage_junk_line,
    "nul-filled": damage_nul_fill,
    "truncated": damage_truncate,
    "bit-flipped": damage_bit_flip,
    "directory": damage_directory,
    "deleted": damage_delete,
}
FILES = ["snapshot.npz", "vectors.log"]


def build(path: Path) -> dict[str, object]:
    """A store whose agent has a snapshot (1500 memories, checkpointed) and changes after it (a vector log and
    logged changes); returns what the answers must be."""
    with open_agents(path, "a", embeddings="hash") as cx:
        cx.store_many("a", [{"content": f"bulk memory {i} about topic{i % 50}"} for i in range(1500)])
    with open_agents(path, "a", embeddings="hash") as cx:
        kept = cx.store("a", "the deploy script needs the vault token", type="decision")
        gone = cx.store("a", "temporary note to forget")
        cx.touch("a", kept.id)
        cx.forget("a", gone.id)
        expected = {
            "count": cx.count("a"),
            "stats": cx.stats("a"),
            "recall": [m.id for m in cx.recall("a", "topic7", limit=100)],
            "kept": kept.id,
            "kept_usage": cx.get("a", kept.id).usage_count,
        }
    index_dir = path / INDEX_DIR / "a"
    assert (index_dir / "snapshot.npz").is_file() and (index_dir / "vectors.log").is_file()
    return expected


def check_everything_works(path: Path, expected: dict[str, object]) -> None:
    with open_agents(path, "a", embeddings="hash") as cx:
        assert cx.count("a") == expected["count"]
        assert cx.stats("a") == expected["stats"]
        assert [m.id for m in cx.recall("a", "topic7", limit=100)] == expected["recall"]
        assert cx.get("a", expected["kept"]).usage_count == expected["kept_usage"]
        assert cx.search("a", "vault token deploy", mode="bm25")[0].memory.id == expected["kept"]
        assert cx.search("a", "vault token deploy", mode="semantic")[0].memory.id == expected["kept"]
        assert cx.search("a", "vault token deploy")[0].memory.id == expected["kept"]
        assert cx.touch("a", expected["kept"]).usage_count == expected["kept_usage"] + 1
        new = cx.store("a", "stored after the damage")
        assert cx.recall("a", "after the damage")[0].id == new.id
        assert cx.forget("a", new.id)
        assert "vault token" in cx.agent_start("a", task="deploy with the vault token")
        assert [m.content for m in cx.agent_end("a", "LEARNED: damage is survivable")] == ["damage is survivable"]
        assert cx.prune("a", min_confidence=0.1, dry_run=True) == 0
        status = cx.index_status("a")
        assert status.memories == status.stored == expected["count"] + 1
        from_store = stored_memories(cx, "a")
        assert {m.id for m in cx.recall("a", limit=10_000)} == set(from_store)
    with open_agents(path, "a", embeddings="hash") as cx:  # and the repaired files serve the next start
        assert cx.count("a") == expected["count"] + 1 and cx.index_status("a").rebuilds == 0


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("name", FILES)
def test_any_damage_to_a_derived_file_is_survived(tmp_path, name, damage, caplog):
    path = tmp_path / "store"
    expected = build(path)
    DAMAGES[damage](path / INDEX_DIR / "a" / name)
    check_everything_works(path, expected)


@pytest.mark.parametrize("damage", ["directory", "deleted", "junk-line"])
def test_the_index_directory_itself_damaged(tmp_path, damage):
    path = tmp_path / "store"
    expected = build(path)
    directory = path / INDEX_DIR / "a"
    if damage == "directory":
        shutil.rmtree(directory)
        directory.mkdir()
        (directory / "snapshot.npz").mkdir()
    elif damage == "deleted":
        shutil.rmtree(path / INDEX_DIR)
    else:
        shutil.rmtree(directory)
        directory.write_text("a file where the scope's directory belongs")
    check_everything_works(path, expected)


def test_a_stale_snapshot_with_the_same_count_is_detected(tmp_path):
    """The writes since an older snapshot balance out (one store, one forget, three touches): the count alone
    cannot tell, the change sequence does, whether or not the log still holds those changes."""
    path = tmp_path / "store"
    with open_agents(path, "a") as cx:
        cx.store_many("a", [{"content": f"memory {i}"} for i in range(1500)])
        old = cx.store("a", "an old memory")
    snapshot = path / INDEX_DIR / "a" / "snapshot.npz"
    stale = snapshot.read_bytes()
    with open_agents(path, "a") as cx:
        new = cx.store("a", "a new memory")
        cx.forget("a", old.id)
        for _ in range(3):
            cx.touch("a", new.id)
    for compacted in (False, True):
        if compacted:  # fold the log into a fresh snapshot, then put the stale one back
            with open_agents(path, "a") as cx:
                cx.reindex("a")
        snapshot.write_bytes(stale)
        with open_agents(path, "a") as cx:
            assert [m.id for m in cx.recall("a", "new")] == [new.id]
            assert cx.recall("a", "new")[0].usage_count == 3
            assert cx.recall("a", "old") == []
            assert cx.count("a") == 1501
            assert cx.index_status("a").rebuilds == (1 if compacted else 0)


def test_a_snapshot_from_another_store_is_not_trusted(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    with open_agents(first, "a") as cx:
        cx.store_many("a", [{"content": f"first store {i}"} for i in range(1200)])
    with open_agents(second, "a") as cx:
        cx.store_many("a", [{"content": f"second store {i}"} for i in range(1200)])
    shutil.copy(first / INDEX_DIR / "a" / "snapshot.npz", second / INDEX_DIR / "a" / "snapshot.npz")
    with open_agents(second, "a") as cx:
        assert len(cx.recall("a", "second", limit=2000)) == 1200 and cx.recall("a", "first") == []


def test_reads_never_fail_on_an_unwritable_state_directory(tmp_path):
    path = tmp_path / "store"
    expected = build(path)
    index_dir = path / INDEX_DIR / "a"
    index_dir.chmod(0o500)
    try:
        with open_agents(path, "a", embeddings="hash") as cx:
            assert cx.count("a") == expected["count"]
            assert [m.id for m in cx.recall("a", "topic7", limit=100)] == expected["recall"]
    finally:
        index_dir.chmod(0o700)


def test_cortex_opens_with_derived_files_of_every_agent_damaged(tmp_path):
    path = tmp_path / "store"
    with open_agents(path, "a", "b") as cx:
        for agent in ("a", "b"):
            cx.store_many(agent, [{"content": f"{agent} memory {i}"} for i in range(1100)])
    for agent in ("a", "b"):
        damage_bit_flip(path / INDEX_DIR / agent / "snapshot.npz")
    with Cortex.open(path, embeddings=None) as cx:
        for agent in ("a", "b"):
            cx.agents.register(agent)
            assert cx.count(agent) == 1100
