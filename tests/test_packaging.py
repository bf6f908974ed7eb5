"""The wheel a person installs (`pipx install`, `pip install`): built here with the
project's own backend, then read. It must install one top-level package, `relay`, with the
watchers and schedulers inside it, and run from that layout alone."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = f"from hatchling.build import build_wheel; print(build_wheel({str(out)!r}))"
    subprocess.run([sys.executable, "-c", build], cwd=ROOT, check=True, capture_output=True)
    (found,) = out.glob("*.whl")
    return found


def test_the_wheel_installs_relay_alone_with_watchers_and_schedulers_inside(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"relay"}
    assert "relay/watchers/once.py" in names and "relay/schedulers/cron.py" in names
    assert "relay/py.typed" in names
    # the links of the checkout are not shipped as files: each module is in the wheel once
    assert len(names) == len(set(names))


def test_the_installed_layout_runs_without_the_checkout(wheel: Path, tmp_path: Path) -> None:
    """Unpacked beside nothing of the checkout, the CLI and the scheduler entry's module
    import from the wheel's own files."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = (
        "import relay.cli, relay.schedulers.cron, relay.watchers.once, sys;"
        "print(relay.watchers.once.__file__)"
    )
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); {probe}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(site))
