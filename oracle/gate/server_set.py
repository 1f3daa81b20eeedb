"""Several servers in one gate must be one configuration: the identity fields that have to agree.

    differences({"server1": id1, "server2": id2})  # ['server.model_path: server1 a.gguf, server2 b.gguf']

Fields that name an instance (URL, port, launch command with its {port} / {worker}, host, times)
are left out; what is compared is what decides the tokens: the server build and settings it
reports, the model, the tokenizer and the chat template.
"""

from __future__ import annotations

from oracle.backends import RequestFailed, make_backend
from oracle.run.prompting import template_sha256

__all__ = ["comparable", "differences", "probe_identities"]


def comparable(identity: dict) -> dict[str, object]:
    """The identity fields that must agree across servers, flattened to 'a.b' keys."""
    out: dict[str, object] = {f"server.{k}": v for k, v in sorted((identity.get("server") or {}).items())}
    model = identity.get("model") or {}
    if model.get("sha256"):
        out["model.sha256"] = model["sha256"]
    tokenizer = identity.get("tokenizer") or {}
    if tokenizer.get("sha256"):
        out["tokenizer.sha256"] = tokenizer["sha256"]
    if "chat_template_sha256" in identity:
        out["chat_template_sha256"] = identity["chat_template_sha256"]
    return out


def differences(identities: dict[str, dict]) -> list[str]:
    """One line per field whose value is not the same on every server (each server's value named)."""
    flat = {label: comparable(ident) for label, ident in identities.items()}
    keys = sorted({k for f in flat.values() for k in f})
    lines = []
    for key in keys:
        values = {label: f.get(key) for label, f in flat.items()}
        if len({repr(v) for v in values.values()}) > 1:
            lines.append(f"{key}: " + ", ".join(f"{label} {v!r}" for label, v in values.items()))
    return lines


def probe_identities(backend: str, urls: dict[str, str]) -> dict[str, dict]:
    """Each running server's comparable identity, read over HTTP before any item runs."""
    out = {}
    for label, url in urls.items():
        client = make_backend(backend, url, timeout_s=30)
        try:
            out[label] = {"server": client.server_identity(),
                          "chat_template_sha256": template_sha256(client.chat_template())}
        except (RequestFailed, OSError) as exc:
            raise RequestFailed(f"{label} ({url}): {exc}") from None
    return out
