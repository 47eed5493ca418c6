"""`emmy bench` without a GPU: which cases it runs, that each runs in a process of its own with
the parent's copy bandwidth, how the processes' results are merged into one JSON, and how a
process that dies is reported. The benchmark processes themselves are faked here; on a GPU
host they are real (see ../shared/gpu-host/README.md)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from emmy.tools import bench, cli


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr(cli, "require_gpu", lambda command: None)
    monkeypatch.setattr(bench, "device_copy_bandwidth", lambda: 4321.0)
    commands = []

    def run(command, **kwargs):
        commands.append(command)
        only = command[command.index("--only") + 1]
        output = command[command.index("--json") + 1]
        name, shape, dtype = re.sub(r"\\(.)", r"\1", only.strip("^$")).split()
        if name == "gelu":  # this one dies before it writes anything
            return subprocess.CompletedProcess(command, 1, stdout="Traceback\nboom\n")
        result = {"program": name, "shape": shape, "dtype": dtype,
                  "backends": [{"backend": "emmy", "correct": True, "median_us": 5.0}]}
        with open(output, "w") as file:
            json.dump({"results": [result]}, file)
        return subprocess.CompletedProcess(command, 0, stdout=f"{name} table\n")

    monkeypatch.setattr(subprocess, "run", run)
    return commands


def test_each_case_runs_in_a_process_of_its_own(fake_gpu, tmp_path, capsys):
    path = tmp_path / "results.json"
    status = cli.main(["bench", "--suite", "memory-bound", "--only", "^rms_norm 16x4096", "--json", str(path)])
    assert status == 0
    assert len(fake_gpu) == 2
    for command, dtype in zip(fake_gpu, ["float32", "bfloat16"]):
        assert command[1:5] == ["-m", "emmy.tools.cli", "bench", "--suite"]
        assert "--in-process" in command
        assert command[command.index("--copy-bandwidth") + 1] == "4321.0"
        assert re.fullmatch(command[command.index("--only") + 1], f"rms_norm 16x4096 {dtype}")
    document = json.loads(path.read_text())
    assert [(r["program"], r["shape"], r["dtype"]) for r in document["results"]] == [
        ("rms_norm", "16x4096", "float32"), ("rms_norm", "16x4096", "bfloat16")]
    assert "[2/2] rms_norm 16x4096 bfloat16" in capsys.readouterr().out


def test_a_process_that_dies_is_a_failed_case(fake_gpu, tmp_path):
    path = tmp_path / "results.json"
    status = cli.main(["bench", "--suite", "memory-bound", "--only", "^gelu 16x4096", "--json", str(path)])
    assert status == 1
    results = json.loads(path.read_text())["results"]
    assert len(results) == 2
    (row,) = results[0]["backends"]
    assert row["correct"] is False and "exited 1" in row["error"] and "boom" in row["error"]


def test_no_matching_case_is_an_error(capsys):
    assert cli.main(["bench", "--suite", "memory-bound", "--only", "no such case"]) == 1
    assert "no case of suite memory-bound matches --only 'no such case'" in capsys.readouterr().err
