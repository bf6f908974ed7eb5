"""The Actions workflow keeps the node key out of a pusher's reach: every job that reads
RELAY_NODE_KEY names the deployment environment that holds it (and tells relay which), a
full pass ends with `relay doctor`, and the README's caller passes the key by name, as a
reusable workflow's environment secret must be."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github/workflows/relay-node.yml"
NAMED = "${{ inputs.environment || 'relay-node' }}"


def _workflow() -> dict[Any, Any]:
    data: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return data


def _reads_the_key(job: dict[str, Any]) -> bool:
    return "secrets.RELAY_NODE_KEY" in yaml.safe_dump(job)


def test_every_job_reading_the_key_names_the_environment_and_tells_relay() -> None:
    data = _workflow()
    call = data[True]["workflow_call"]  # YAML 1.1 reads the key `on` as True
    assert call["inputs"]["environment"]["default"] == "relay-node"
    readers = {name: job for name, job in data["jobs"].items() if _reads_the_key(job)}
    assert readers, "some job must read RELAY_NODE_KEY"
    for name, job in readers.items():
        assert job.get("environment") == NAMED, name
        assert job["env"]["RELAY_ENVIRONMENT"] == NAMED, name
        assert job["permissions"].get("actions") == "read", name  # doctor reads the rules


def test_a_full_pass_ends_with_doctor_reading_the_environment_with_the_jobs_token() -> None:
    (job,) = [j for j in _workflow()["jobs"].values() if _reads_the_key(j)]
    last = job["steps"][-1]
    assert last["run"].startswith("relay doctor")
    assert "workflow_dispatch" in last["if"] and "schedule" in last["if"]
    assert last["env"]["GITHUB_TOKEN"] == "${{ github.token }}"


def test_the_readmes_caller_passes_the_key_by_name_and_names_the_environment() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## A GitHub Actions runner as a node", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    (job,) = yaml.safe_load(block.group(1))["jobs"].values()
    assert job["uses"].split("@")[0].endswith("/.github/workflows/relay-node.yml")
    assert job["with"]["environment"] == "relay-node"
    assert job["secrets"]["RELAY_NODE_KEY"] == "${{ secrets.RELAY_NODE_KEY }}"
    assert "Environment secrets" in section and "Selected branches" in section
