#!/usr/bin/env python3
"""Validate memories.jsonl and questions.jsonl (stdlib only). Exit code 1 on any error."""
import json, os, sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
errors = []
def err(msg):
    errors.append(msg)

def load(name):
    rows = []
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                err(f"{name}:{i}: invalid JSON: {e}")
    return rows

mems = load("memories.jsonl")
qs = load("questions.jsonl")
KINDS = {"decision", "convention", "gotcha", "command", "file_fact", "noise"}
by = {}
for mm in mems:
    for fld in ("key", "content", "created_at", "kind", "supersedes"):
        if fld not in mm:
            err(f"memory missing field {fld}: {mm}")
    k = mm.get("key")
    if k in by:
        err(f"duplicate memory key {k}")
    by[k] = mm
    if mm.get("kind") not in KINDS:
        err(f"{k}: unknown kind {mm.get('kind')}")
    ca = mm.get("created_at", "")
    if not ("2026-01-05" <= ca[:10] <= "2026-10-30"):
        err(f"{k}: created_at out of range {ca}")
for mm in mems:
    s = mm.get("supersedes")
    if s is not None:
        if s not in by:
            err(f"{mm['key']}: supersedes unknown key {s}")
        elif not by[s]["created_at"] < mm["created_at"]:
            err(f"{mm['key']}: supersedes {s} which is not older")

def chain_older(k):
    out, cur, seen = [], by[k].get("supersedes"), set()
    while cur and cur in by and cur not in seen:
        seen.add(cur); out.append(cur); cur = by[cur].get("supersedes")
    return out

superseded = Counter(mm["supersedes"] for mm in mems if mm.get("supersedes"))
for s, c in superseded.items():
    if c > 1:
        err(f"{s} is superseded by {c} memories (chains must be linear)")

qids = set()
QK = {"keyword", "multi", "paraphrase", "temporal"}
gold_used = set()
for q in qs:
    qid = q.get("id")
    if qid in qids:
        err(f"duplicate question id {qid}")
    qids.add(qid)
    if q.get("kind") not in QK:
        err(f"{qid}: unknown kind {q.get('kind')}")
    if q.get("split") not in ("dev", "heldout"):
        err(f"{qid}: bad split {q.get('split')}")
    gold = q.get("gold") or []
    if not gold:
        err(f"{qid}: empty gold")
    for g in gold:
        if g not in by:
            err(f"{qid}: gold key {g} not in memories")
        elif by[g]["kind"] == "noise":
            err(f"{qid}: gold {g} is a noise memory")
        gold_used.add(g)
    if len(set(gold)) != len(gold):
        err(f"{qid}: duplicate gold keys")
    if q.get("kind") == "multi" and not (2 <= len(gold) <= 4):
        err(f"{qid}: multi question needs 2-4 gold, has {len(gold)}")
    outd = q.get("outdated") or []
    for o in outd:
        if o not in by:
            err(f"{qid}: outdated key {o} not in memories")
    if q.get("kind") == "temporal":
        if len(gold) != 1:
            err(f"{qid}: temporal question must have exactly 1 gold")
        elif gold[0] in by:
            g = gold[0]
            if g in superseded:
                err(f"{qid}: temporal gold {g} is itself superseded (not newest)")
            chain = chain_older(g)
            if not chain:
                err(f"{qid}: temporal gold {g} supersedes nothing")
            if set(outd) != set(chain):
                err(f"{qid}: outdated {outd} != chain {chain}")
    elif outd:
        for o in outd:
            if o in by and o not in sum((chain_older(g) for g in gold if g in by), []):
                err(f"{qid}: outdated {o} not in gold chain")

qc = Counter(q.get("kind") for q in qs)
mc = Counter(mm.get("kind") for mm in mems)
long_n = sum(1 for mm in mems if len(mm.get("content", "")) >= 1500)
split = Counter((q.get("kind"), q.get("split")) for q in qs)
chains = sum(1 for mm in mems if mm.get("supersedes") and mm["key"] not in superseded)
noise_gold = [g for g in gold_used if by.get(g, {}).get("kind") == "noise"]
print(f"memories: {len(mems)}  by kind: {dict(sorted(mc.items()))}")
print(f"  noise share: {mc['noise']/max(1,len(mems)):.1%}  long (>=1500 chars): {long_n} ({long_n/max(1,len(mems)):.1%})")
print(f"  supersession chains: {chains}  superseding memories: {sum(superseded.values())}")
print(f"questions: {len(qs)}  by kind: {dict(sorted(qc.items()))}")
print(f"  split: {dict(sorted(split.items()))}")
mins = {"keyword": 90, "multi": 60, "paraphrase": 90, "temporal": 60}
for k, v in mins.items():
    if qc[k] < v:
        err(f"only {qc[k]} {k} questions (need >= {v})")
if len(qs) < 320:
    err(f"only {len(qs)} questions (need >= 320)")
if not (600 <= len(mems) <= 900):
    err(f"{len(mems)} memories (need 600-900)")
if chains < 45:
    err(f"only {chains} supersession chains (need >= 45)")
for e in errors:
    print("ERROR:", e)
print("OK" if not errors else f"{len(errors)} error(s)")
sys.exit(1 if errors else 0)
