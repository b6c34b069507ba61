"""A minimal PEP 517 build backend: a pure-Python wheel of polyloop_conform.

It reads name and version from pyproject.toml and zips the package with a
dist-info directory, using nothing outside the standard library.
"""

from __future__ import annotations

import base64
import hashlib
import os
import pathlib
import tarfile
import tomllib
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
PACKAGE = "polyloop_conform"


def _project() -> tuple[str, str, str, str]:
    """Name, version, summary and requires-python, all from pyproject.toml
    (written once, there)."""
    meta = tomllib.loads((HERE / "pyproject.toml").read_text())["project"]
    return meta["name"], meta["version"], meta.get("description", ""), meta["requires-python"]


def _dist(name: str) -> str:
    return name.replace("-", "_")


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def _metadata(name: str, version: str, summary: str, python: str) -> str:
    return f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: {summary}\nRequires-Python: {python}\n"


def _package_files() -> list[pathlib.Path]:
    """The package's modules and its py.typed marker (PEP 561)."""
    return sorted([*(HERE / PACKAGE).rglob("*.py"), HERE / PACKAGE / "py.typed"])


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version, summary, python = _project()
    info = pathlib.Path(metadata_directory) / f"{_dist(name)}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata(name, version, summary, python))
    return info.name


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version, summary, python = _project()
    info = f"{_dist(name)}-{version}.dist-info"
    wheel_name = f"{_dist(name)}-{version}-py3-none-any.whl"
    files: dict[str, bytes] = {}
    for path in _package_files():
        files[path.relative_to(HERE).as_posix()] = path.read_bytes()
    files[f"{info}/METADATA"] = _metadata(name, version, summary, python).encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: polyloop-conform build_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{info}/top_level.txt"] = f"{PACKAGE}\n".encode()
    record = "".join(f"{p},{_digest(d)},{len(d)}\n" for p, d in files.items()) + f"{info}/RECORD,,\n"
    files[f"{info}/RECORD"] = record.encode()
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files.items():
            z.writestr(p, d)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    name, version, _, _ = _project()
    base = f"{_dist(name)}-{version}"
    target = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(target, "w:gz") as t:
        for rel in ["pyproject.toml", "build_backend.py", *[p.relative_to(HERE).as_posix() for p in _package_files()]]:
            t.add(HERE / rel, arcname=f"{base}/{rel}")
    return base + ".tar.gz"
