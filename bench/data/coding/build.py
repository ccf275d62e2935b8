#!/usr/bin/env python3
"""Builds memories.jsonl and questions.jsonl for the 'ledgerly' coding-memory benchmark.
All content is hand-written in src/part*.py; this script only assigns keys/timestamps and writes JSONL.
Stdlib only. Run: python3 build.py"""
import json, os, glob, hashlib

HERE = os.path.dirname(os.path.abspath(__file__))
MEMS = []   # dicts: name, date, kind, content, sup
QS = []     # dicts: kind, question, gold(names)
_names = set()
_noise_i = [0]

def m(name, date, kind, content, sup=None):
    assert name not in _names, name
    _names.add(name)
    MEMS.append(dict(name=name, date=date, kind=kind, content=" ".join(content.split()) if "\n" not in content else content.strip(), sup=sup))

def n(date, content):
    _noise_i[0] += 1
    m("noise%03d" % _noise_i[0], date, "noise", content)

KMAP = {"k": "keyword", "m": "multi", "p": "paraphrase", "t": "temporal"}
def q(kind, question, gold):
    if isinstance(gold, str):
        gold = [gold]
    QS.append(dict(kind=KMAP[kind], question=question, gold=list(gold)))

for path in sorted(glob.glob(os.path.join(HERE, "src", "part*.py"))):
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), globals())

# timestamps: date + deterministic time of day; ensure superseder is later than its predecessor
def ts(mm, i):
    h = int(hashlib.md5(mm["name"].encode()).hexdigest(), 16)
    return "2026-%sT%02d:%02d:00Z" % (mm["date"], 8 + h % 10, (h // 10) % 60)
for i, mm in enumerate(MEMS):
    mm["created_at"] = ts(mm, i)
byname = {mm["name"]: mm for mm in MEMS}
for mm in MEMS:
    if mm["sup"]:
        old = byname[mm["sup"]]
        assert old["created_at"] < mm["created_at"], (mm["name"], old["created_at"], mm["created_at"])
order = sorted(MEMS, key=lambda x: (x["created_at"], x["name"]))
key = {}
for i, mm in enumerate(order, 1):
    key[mm["name"]] = "m%04d" % i

def chain_older(name):
    out = []
    cur = byname[name]["sup"]
    while cur:
        out.append(key[cur]); cur = byname[cur]["sup"]
    return out

with open(os.path.join(HERE, "memories.jsonl"), "w") as f:
    for mm in order:
        f.write(json.dumps({"key": key[mm["name"]], "content": mm["content"], "created_at": mm["created_at"],
                            "kind": mm["kind"], "supersedes": key[mm["sup"]] if mm["sup"] else None}, ensure_ascii=False) + "\n")
cnt = {}
with open(os.path.join(HERE, "questions.jsonl"), "w") as f:
    for i, qq in enumerate(QS, 1):
        c = cnt.get(qq["kind"], 0); cnt[qq["kind"]] = c + 1
        for g in qq["gold"]:
            assert g in key, (g, qq["question"])
        outdated = []
        if qq["kind"] == "temporal":
            assert len(qq["gold"]) == 1
            outdated = chain_older(qq["gold"][0])
            assert outdated, qq["question"]
        f.write(json.dumps({"id": "q%04d" % i, "question": qq["question"], "kind": qq["kind"],
                            "gold": [key[g] for g in qq["gold"]], "outdated": outdated,
                            "split": "dev" if c % 2 == 0 else "heldout"}, ensure_ascii=False) + "\n")
print("memories", len(MEMS), "questions", len(QS), cnt)
