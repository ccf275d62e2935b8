"""The cost of journaling a remote write: ``store_many`` of 3,000 memories on an Oxigraph server, with and without the
Graph Store Protocol, by two checkouts of Cortex (before and after), alternating, a fresh process per call.

    python bench/journal_cost.py BEFORE_CHECKOUT AFTER_CHECKOUT [RUNS]
"""
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.sparql_servers import start_oxigraph

BEFORE, AFTER = sys.argv[1], sys.argv[2]
REPS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
server = start_oxigraph(tempfile.mkdtemp())
ONE = r'''
import sys, time, json
from cortex import Cortex
url, agent = sys.argv[1], sys.argv[2]
with Cortex.open(url, embeddings=None, state_dir=sys.argv[3]) as cx:
    cx.agents.register(agent)
    items = [{"content": f"fact {i} of {agent}: the kiwi service retries {i % 7} times"} for i in range(3000)]
    t = time.perf_counter(); cx.store_many(agent, items); print(time.perf_counter() - t)
'''
results = {}
for mode, url in (("gsp", server.url), ("sparql", server.url.replace("&gsp=/store", ""))):
    for rep in range(REPS):
        for code in (BEFORE, AFTER):
            agent = f"a{abs(hash((mode, rep, code))) % 10**8}"
            out = subprocess.run([sys.executable, "-c", ONE, url, agent, tempfile.mkdtemp()], check=False, capture_output=True,
                                 text=True, env={"PYTHONPATH": code, "PATH": "/usr/bin:/bin"}, cwd=code)
            assert out.returncode == 0, out.stderr[-2000:]
            results.setdefault((mode, code), []).append(float(out.stdout.split()[-1]))
for (mode, code), times in results.items():
    print(mode, code, f"median {statistics.median(times):.2f} s", [f"{t:.2f}" for t in times])
for mode in ("gsp", "sparql"):
    print(mode, "ratio after/before %.2f" % (statistics.median(results[(mode, AFTER)]) /
                                           statistics.median(results[(mode, BEFORE)])))
server.stop()
