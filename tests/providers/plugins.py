"""The test plugin distribution (``plugin_dist/``) built as a wheel and installed with pip into a directory of its
own, as any provider plugin is installed: its entry points in ``cortex.providers`` are then what
``importlib.metadata`` finds on ``sys.path`` (or a subprocess's ``PYTHONPATH``)."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

SOURCE = Path(__file__).parent / "plugin_dist"


def build_wheel(out: Path) -> Path:
    """``plugin_dist`` as a wheel (pure Python: its modules, METADATA, entry_points.txt, WHEEL, RECORD), written
    here rather than by setuptools, whose wheel builder is not installed everywhere."""
    project = tomllib.loads((SOURCE / "pyproject.toml").read_text())["project"]
    name, version = project["name"].replace("-", "_"), project["version"]
    info = f"{name}-{version}.dist-info"
    entry_points = "[cortex.providers]\n" + "".join(
        f"{key} = {value}\n" for key, value in project["entry-points"]["cortex.providers"].items())
    files = {f"{module}.py": (SOURCE / f"{module}.py").read_bytes()
             for module in ("cortex_test_providers", "cortex_test_sneaky")}
    files[f"{info}/METADATA"] = (f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {version}\n"
                                 f"Summary: {project['description']}\n").encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: cortex-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{info}/entry_points.txt"] = entry_points.encode()
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = out / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


def install(target: Path) -> Path:
    """The plugin distribution installed by pip into ``target`` (a directory for ``sys.path``); returns it."""
    wheel = build_wheel(target.parent)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--target", str(target), str(wheel)], check=True, capture_output=True, text=True)
    return target
