"""The machine's identity: its --oracle-machine name (the host name by default), and its accelerator's model, driver
and runtime read from what the run's identity gathered."""

from __future__ import annotations

import socket

import pytest

from oracle.ledger.options import machine_name
from oracle.store.machine import machine_identity

NVIDIA = {"accelerator": {"nvidia-smi": "NVIDIA H200, 580.159.04, 143771 MiB", "kernel_modules": {"nvidia": "580"}},
          "host": {"hostname": "vm", "cpu": "Intel(R) Xeon(R) Processor"},
          "server": {"server": "llama-server", "build": "b7000-abc"}, "family": "llamacpp"}


def test_an_nvidia_machine():
    assert machine_identity("cuda-box", NVIDIA) == {"name": "cuda-box", "accelerator": "NVIDIA H200",
                                                    "driver": "nvidia 580.159.04", "runtime": "llama-server b7000-abc"}


def test_an_intel_gpu_by_xpu_smi_and_its_kernel_module():
    identity = {"accelerator": {"xpu-smi": "| 0 | Device Name: Intel(R) Arc(TM) Pro B70 Graphics |\n| | Vendor |",
                                "kernel_modules": {"xe": "loaded"}},
                "host": {"hostname": "b70"}, "server": {"server": "vllm"}, "family": "vllm",
                "packages": {"vllm": "0.11.0"}}
    found = machine_identity(None, identity)
    assert found == {"name": "b70", "accelerator": "Intel(R) Arc(TM) Pro B70 Graphics", "driver": "xe loaded",
                     "runtime": "vllm 0.11.0"}


def test_a_cpu_machine_is_its_cpu_model_and_the_default_name_is_the_host_name():
    found = machine_identity(None, {"host": {"cpu": "AMD EPYC"}, "server": {"server": "llama-server", "build": "b1"}})
    assert found["name"] == socket.gethostname() and found["accelerator"] == "AMD EPYC" and found["driver"] is None


@pytest.mark.parametrize("value", ["arc-b70", "cuda_box.2", "A" * 64])
def test_a_runner_label_is_a_machine_name(value):
    assert machine_name(value) == value


@pytest.mark.parametrize("value", ["", "two words", "-dash-first", "a/b", "A" * 65, "b70;rm"])
def test_a_bad_machine_name_is_a_usage_error_naming_the_fix(value):
    with pytest.raises(pytest.UsageError) as refused:
        machine_name(value)
    assert str(refused.value).startswith(f"--oracle-machine {value!r}: not a machine name; give one word of ")
    assert "--oracle-machine arc-b70" in str(refused.value)
