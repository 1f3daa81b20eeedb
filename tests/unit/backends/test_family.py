"""A backend family is its module (protocol + `FamilyDescriptor`) registered in `FAMILIES`, plus its column
in docs/families.md (tests/unit/test_families_doc.py), plus, where oracle starts or loads it itself, its entry in
`targets.families.FAMILY_TARGETS`: every other part of oracle reads the registries. Here a
sixth family (a server one, then an in-process one) is registered for one test and each reader is asked about
it; and no module compares a family's name outside that family's own module."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from oracle.backends import (FAMILIES, CacheEvidence, Capabilities, FamilyDescriptor, backend_help, family_of,
                             is_in_process, make_backend, parse_backend, server_families)
from oracle.backends.base import BackendBase
from oracle.targets import TargetError, make_target, planned_context
from oracle.targets.families import FAMILY_TARGETS, EmbeddedServer, EmbeddedTarget, FamilyTarget

REPO = Path(__file__).resolve().parents[3]


class DummyBackend(BackendBase):
    family = "dummy"
    capabilities = Capabilities(cache=CacheEvidence(policy="none", counters_hint="none"))

    def __init__(self, base_url: str, *, platform: str = "", **_transport) -> None:
        self.base_url, self.platform = base_url, platform


class DummyLoadError(RuntimeError):
    pass


class InProcessDummy(BackendBase):
    family = "dummyproc"
    capabilities = Capabilities(cache=CacheEvidence(policy="none", counters_hint="none"), in_process=True,
                                concurrent=False, restartable=False, precision_floor=True)

    def __init__(self, model, *, platform: str = "", dtype: str = "float32", ov_config=None) -> None:
        if dtype == "bfloat16":
            raise DummyLoadError("dummyproc cannot load bfloat16 weights: pip install 'oracle[dummy]'")
        self.model_path, self.dtype = Path(model), dtype


def _dummy_server(model: str | None, server_args: str) -> EmbeddedTarget:
    command = f"dummy-server -m {model or 'default.gguf'} --port {{port}} {server_args}".strip()
    return EmbeddedTarget(command, None, Path(model or "default.gguf"))


DUMMY = FamilyDescriptor(name="dummy", help="a test server", backend=DummyBackend)
DUMMY_TARGET = FamilyTarget(embedded=EmbeddedServer("dummy-cpu", start=_dummy_server, platforms=("", "cpu")),
                            planned_context=lambda model, server_args: (1234, "dummy-server's own -c"))


def _options(backend: str, **given) -> SimpleNamespace:
    defaults = {"backend": backend, "urls": (), "launch": None, "model": None, "server_args": "",
                "request_timeout": 600, "launch_timeout": 600, "family_settings": ()}
    return SimpleNamespace(**(defaults | given))


def test_a_sixth_server_family_is_known_to_every_reader_once_registered(monkeypatch, tmp_path):
    monkeypatch.setitem(FAMILIES, "dummy", DUMMY)
    monkeypatch.setitem(FAMILY_TARGETS, "dummy", DUMMY_TARGET)  # its embedded server: the target layer's half
    assert parse_backend("dummy-cpu") == ("dummy", "cpu", "") and family_of("dummy-cpu") is DUMMY
    assert "dummy (a test server)" in backend_help() and "dummy" in server_families()
    assert not is_in_process("dummy")
    backend = make_backend("dummy-cpu", "http://127.0.0.1:9")
    assert isinstance(backend, DummyBackend) and backend.platform == "cpu"
    target = make_target(_options("dummy-cpu", server_args="-x"), worker=0, log_dir=tmp_path)
    assert target.kind == "embedded"
    assert target.configured_command == "dummy-server -m default.gguf --port {port} -x"
    with pytest.raises(TargetError, match="dummy-gpu: no embedded server.*llamacpp, vllm-cpu and dummy-cpu"):
        make_target(_options("dummy-gpu"), worker=0, log_dir=tmp_path)
    assert planned_context("dummy", started_elsewhere=False, server_args="", model=None) == \
        (1234, "dummy-server's own -c")
    assert planned_context("dummy", started_elsewhere=True, server_args="", model=None)[0] == 8192
    # Its docs column: tests/unit/test_families_doc.py fails for a registered family without one.


def test_a_sixth_in_process_family_is_loaded_refused_and_listed(monkeypatch, pytester, tmp_path):
    (tmp_path / "weights.gguf").write_text("not read by the dummy")
    monkeypatch.setitem(FAMILIES, "dummyproc", FamilyDescriptor(
        name="dummyproc", help="a test model in this process", backend=InProcessDummy,
        load_errors=(DummyLoadError,)))
    monkeypatch.setitem(FAMILY_TARGETS, "dummyproc", FamilyTarget(default_model=lambda: tmp_path / "weights.gguf"))
    assert is_in_process("dummyproc") and "dummyproc" not in server_families()
    target = make_target(_options("dummyproc"), worker=0, log_dir=tmp_path)
    assert target.kind == "in-process" and target.model_path == tmp_path / "weights.gguf"
    assert isinstance(target.up(), InProcessDummy)
    with pytest.raises(TargetError, match=r"cannot load bfloat16 weights: pip install 'oracle\[dummy\]'"):
        target.load("bfloat16")
    with pytest.raises(TargetError, match="no server to restart"):
        target.restart()
    assert planned_context("dummyproc", started_elsewhere=False, server_args="", model=None)[0] == 8192
    # The options read its capabilities (no --ladder where requests run one at a time) and list it.
    refused = pytester.runpytest("-p", "no:cacheprovider", "--backend=dummyproc", "--ladder=1,2")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--backend dummyproc runs in this process and cannot honour --ladder*"])
    # Listed where the registry names the families: `backend_help` (--help's text is a constant kept equal to it,
    # tests/unit/checks/test_option_modules.py, so that --help imports no family) and a bad --backend's refusal.
    assert "dummyproc (a test model in this process)" in backend_help()
    unknown = pytester.runpytest("-p", "no:cacheprovider", "--backend=nosuch")
    unknown.stderr.fnmatch_lines(["*known families: *dummyproc*"])


def _compared_names(tree: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of each comparison with a family's name: `x == "hf"`, `x in ("hf", ...)`."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for side in [node.left, *node.comparators]:
            items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            found += [(node.lineno, i.value) for i in items
                      if isinstance(i, ast.Constant) and i.value in names]
    return found


def test_no_family_name_is_compared_outside_its_own_module():
    """Family knowledge lives in the family's descriptor and capabilities, never in an if on its name."""
    names = set(FAMILIES)
    modules = sorted((REPO / "oracle").rglob("*.py"))
    found = [f"{path.relative_to(REPO)}:{line}: {name!r}" for path in modules
             for line, name in _compared_names(ast.parse(path.read_text()), names)
             if path != REPO / "oracle" / "backends" / f"{name}.py"]
    assert found == [], "give the family's descriptor (or its Capabilities) a field instead"


def test_the_scan_sees_a_comparison_with_a_family_name():
    source = 'if family == "hf" or f in ("vllm", "x"):\n    pass\n'
    assert _compared_names(ast.parse(source), {"hf", "vllm"}) == [(1, "hf"), (1, "vllm")]


def test_every_family_target_is_a_registered_family():
    """The target layer's half names only families `FAMILIES` registers (a renamed family would lose its server)."""
    assert set(FAMILY_TARGETS) <= set(FAMILIES)
