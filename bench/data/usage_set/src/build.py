"""Assemble the hand-written sessions into ../sessions.jsonl.

The content is in batch_*.py (hand-written). This script only numbers the
sessions, shuffles the display order of each session's memories (seeded, so
label position carries no signal), and assigns dev/heldout splits in an
interleaved, seeded way.
"""
import json, random, pathlib, importlib

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE.parent / "sessions.jsonl"

def main():
    sessions = []
    for mod in ("batch_a", "batch_b", "batch_c", "batch_d", "batch_e"):
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError:
            continue
        sessions.extend(m.SESSIONS)
    rng = random.Random(20240614)
    n = len(sessions)
    # interleaved split: in every consecutive pair of sessions, one is heldout
    splits = []
    for i in range(0, n, 2):
        pair = ["dev", "heldout"]
        rng.shuffle(pair)
        splits.extend(pair)
    splits = splits[:n]
    with OUT.open("w") as f:
        for i, s in enumerate(sessions, 1):
            sid = f"s{i:03d}"
            mem = list(s["mem"])
            rng.shuffle(mem)
            shown, labels = [], {}
            for j, (kind, content) in enumerate(mem, 1):
                key = f"{sid}-m{j}"
                shown.append({"key": key, "content": content})
                labels[key] = kind
            rec = {"session": sid, "project": s["project"], "task": s["task"],
                   "shown": shown, "output": s["out"], "labels": labels,
                   "split": splits[i - 1]}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(f"wrote {n} sessions to {OUT}")

if __name__ == "__main__":
    main()
