"""The install's size and time: a fresh virtualenv per extra set, ``pip install -e "<tree>[extras]"`` timed,
the venv's size on disk (``du -sh``'s MB: MiB) and its 10 biggest distributions (their files as RECORD lists
them, their compiled ``.pyc`` included). Takes minutes (pip resolves and unpacks ~70 packages); not part of the test suite.

    python bench/install.py                         # this tree: `.` and `.[dev]`
    python bench/install.py --extras "" dev browser-tests --tree /path/to/another/checkout

Prints a table and writes bench/results/install.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, target_row, write_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

#: Run by the venv's own interpreter: (MB, name, version) of every installed distribution, biggest first.
_SIZES = """
import importlib.metadata as md, json, os
rows = []
for d in md.distributions():
    total = 0
    for f in d.files or []:
        try:
            total += os.path.getsize(d.locate_file(f))
        except OSError:
            pass
    rows.append((round(total / 2**20, 1), d.metadata["Name"], d.version))
print(json.dumps(sorted(rows, reverse=True)))
"""


def du_mb(path: Path) -> float:
    """Disk usage of ``path`` in MB as ``du -sh`` counts them (MiB of allocated blocks)."""
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True).stdout
    return round(int(out.split()[0]) / 1024, 1)


def measure(tree: Path, extras: str, work: Path) -> dict[str, object]:
    """A fresh venv, ``pip install -e tree[extras]`` timed, then its size and biggest distributions."""
    venv = work / f"venv-{extras or 'default'}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    empty = du_mb(venv)
    target = f"{tree}[{extras}]" if extras else str(tree)
    started = time.perf_counter()
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-e", target], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pip install -e {target} failed:\n{done.stderr[-2000:]}")
    sizes = json.loads(subprocess.run([str(venv / "bin" / "python"), "-c", _SIZES], capture_output=True, text=True,
                                      check=True).stdout)
    return {"extras": extras, "command": f"pip install -e \"{target}\"", "pip_seconds": round(seconds, 1),
            "venv_mb": du_mb(venv), "empty_venv_mb": empty, "distributions": len(sizes),
            "biggest": [{"name": name, "version": version, "mb": mb} for mb, name, version in sizes[:10]]}


#: Issue 31's venv size targets (MB), by extra set.
TARGETS_MB = {"": 250.0, "dev": 350.0}


def targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Issue 31's install rows, for bench/scale.py's summary: each measured extra set's venv against its target,
    why naming its three biggest distributions."""
    return [target_row(f"venv of pip install -e {'.[' + r['extras'] + ']' if r['extras'] else '.'} "
                       f"(pip {r['pip_seconds']} s)", r["venv_mb"], TARGETS_MB[r["extras"]], unit=" MB", spec=".0f",
                       why="biggest: " + ", ".join(f"{b['name']} {b['mb']:.0f} MB" for b in r["biggest"][:3]))
            for r in results if r["extras"] in TARGETS_MB]


def main() -> None:
    """Measure each extra set in its own fresh venv, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to install (default: this one)")
    parser.add_argument("--extras", nargs="+", default=["", "dev"], help='extra sets ("" is the default install)')
    parser.add_argument("--keep", action="store_true", help="keep the venvs (their path is printed)")
    parser.add_argument("--out", type=Path, default=None, help="the JSON (default bench/results/install.json)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cortex-install-"))
    try:
        results = [measure(args.tree.resolve(), extras, work) for extras in args.extras]
    finally:
        if args.keep:
            print(f"venvs kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print_table(f"fresh venv + pip install -e, {args.tree.resolve()}",
                [(r["command"], f"{r['pip_seconds']} s", f"{r['venv_mb']} MB", str(r["distributions"]))
                 for r in results], ("command", "pip time", "venv (du)", "distributions"))
    for r in results:
        print_table(f"10 biggest distributions of {r['command']} (MB, with their .pyc)",
                    [(b["name"], b["version"], str(b["mb"])) for b in r["biggest"]], ("distribution", "version", "MB"))
    commit = subprocess.run(["git", "-C", str(args.tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True).stdout.split()
    path = write_json("install", {"tree": str(args.tree.resolve()), "commit": commit,
                                  "pip": pip[1] if len(pip) > 1 else None, "results": results,
                                  "targets": targets(results)}, args.out)
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
