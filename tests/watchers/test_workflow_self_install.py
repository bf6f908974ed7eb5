"""The Actions workflow installs relay from the checkout when it runs in relay's own
repository, which it recognises by the project name in pyproject.toml: its script is run
here against the real pyproject (``python`` recorded, not run), so the two cannot drift."""

from __future__ import annotations

import os
import stat
import subprocess
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github/workflows/relay-node.yml"


def _install_script() -> str:
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    steps = [s for job in jobs.values() for s in job.get("steps", [])]
    (step,) = [s for s in steps if s.get("name") == "Install relay"]
    return str(step["run"])


def _run(script: str, cwd: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    shim = tmp_path / "bin" / "python"
    shim.parent.mkdir(exist_ok=True)
    shim.write_text('#!/bin/sh\necho "python $*"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = {
        "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
        "RELAY_SPEC": "",
        "RELAY_REPOSITORY": "owner/relay",
        "GITHUB_REPOSITORY": "owner/relay",
        "RELAY_COMMIT": "0" * 40,
        "SERVER_URL": "https://github.com",
    }
    return subprocess.run(
        ["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_the_workflow_installs_itself_from_relays_own_checkout(tmp_path: Path) -> None:
    name = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
    script = _install_script()
    assert f'name = "{name}"' in script, "the self-install check names the project"
    done = _run(script, ROOT, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "python -m pip install .", done.stdout


def test_a_copy_in_another_repository_is_told_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "something-else"\n')
    done = _run(_install_script(), tmp_path, tmp_path)
    assert done.returncode == 1 and "RELAY_SPEC" in done.stdout, done.stdout
