"""The fleet recipes (examples/fleet/) as the commands their CI engine would run, so a test runs them for real:
a GitHub Actions job's `run:` steps with the environment GitHub would give them (its `env:` with `${{ matrix.X }}`,
`${{ secrets.X }}` and `${{ vars.X }}` resolved from the test's own matrix entry, secrets and variables), and a
Buildkite step's `command` with its environment (the pipeline's, the step's, its secrets) after Buildkite's
upload-time interpolation (`$$` is a `$` for the step's shell).

    job = github_job("gate", {"machine": "ci-a"}, secrets={"ORACLE_LEDGER": url}, variables={...}, step="gate")
    proc = job.start(cwd=workspace, env=base_env)
    step = buildkite_step("gate-arc-b70-1", env={"FLEET_MACHINE": "ci-c"}, secrets={"ORACLE_LEDGER": url})

An expression the test cannot resolve, or a single `$` in a Buildkite command (interpolated at upload from the
uploader's environment, not the step's), fails the test: the recipe would not run as its docs say.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
FLEET = REPO / "examples" / "fleet"
GITHUB = FLEET / "github-actions.yml"
BUILDKITE = FLEET / "buildkite.yml"
_EXPRESSION = re.compile(r"^\$\{\{\s*(matrix|secrets|vars)\.(\w+)\s*\}\}$")


@dataclass
class Job:
    name: str
    env: dict[str, str]  # what the engine sets for the commands
    command: str  # a bash script
    shell: tuple[str, ...]  # how the engine runs it

    def start(self, *, cwd: Path, env: dict[str, str]) -> subprocess.Popen:
        """The command in its own bash process, as the engine runs it (output and errors together)."""
        return subprocess.Popen([*self.shell, self.command], cwd=cwd, env={**env, **self.env}, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _resolve(value, sources: dict[str, dict[str, str]]) -> str:
    text = str(value)
    if "${{" not in text:
        return text
    found = _EXPRESSION.match(text)
    assert found, f"{text!r}: an expression the fleet test cannot resolve; keep the recipe's env to matrix.X, " \
                  "secrets.X and vars.X"
    return str(sources[found.group(1)].get(found.group(2), ""))  # GitHub: an undefined property is ''


def github_job(job: str, entry: dict[str, str], *, secrets: dict[str, str], variables: dict[str, str],
               step: str) -> Job:
    """The job's step whose `id` is `step` (its checkout and install steps are this checkout, installed), with the
    job's env resolved for one matrix entry."""
    workflow = load(GITHUB)
    spec = workflow["jobs"][job]
    for key in entry:  # the test's matrix entry sets only what the job reads
        assert any(f"matrix.{key} " in str(v) for v in (spec.get("env") or {}).values()), \
            f"the {job} job's env reads no matrix.{key}"
    sources = {"matrix": entry, "secrets": secrets, "vars": variables}
    env = {k: _resolve(v, sources) for k, v in (spec.get("env") or {}).items()}
    chosen = next((s for s in spec["steps"] if s.get("id") == step), None)
    assert chosen is not None, f"the {job} job has no step with id {step!r}"
    # Values reach the script through env only: an expression inside a script is pasted in as code (injection).
    assert "${{" not in chosen["run"], f"step {step}: an expression inside run:; pass it through env"
    shell = workflow.get("defaults", {}).get("run", {}).get("shell")
    assert shell == "bash", "the workflow's steps run in bash (defaults.run.shell)"
    return Job(job, env, chosen["run"], ("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"))


def _uninterpolated(command: str) -> str:
    """Buildkite's upload-time interpolation, for a command that keeps every variable for the step's shell."""
    assert "$" not in command.replace("$$", ""), \
        f"a single $ in {command!r}: Buildkite would interpolate it at upload; write $$ for the step's shell"
    return command.replace("$$", "$")


def buildkite_step(key: str, *, env: dict[str, str], secrets: dict[str, str]) -> Job:
    """The step `key` with its environment: the pipeline's env, the step's, `env` over them (the test's machine),
    and each secret it names."""
    pipeline = load(BUILDKITE)
    step = next((s for s in pipeline["steps"] if isinstance(s, dict) and s.get("key") == key), None)
    assert step is not None, f"the pipeline has no step with key {key!r}"
    merged = {**(pipeline.get("env") or {}), **(step.get("env") or {})}
    unknown = set(env) - set(merged)
    assert not unknown, f"the step sets no {sorted(unknown)}: the test would set what the recipe does not"
    merged.update(env)
    named = step.get("secrets") or {}
    for variable, secret in (named.items() if isinstance(named, dict) else ((n, n) for n in named)):
        merged[variable] = secrets[secret]
    command = step["command"] if isinstance(step["command"], str) else "\n".join(step["command"])
    return Job(key, {k: str(v) for k, v in merged.items()}, _uninterpolated(command), ("bash", "-e", "-c"))
