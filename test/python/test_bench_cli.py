"""`emmy bench` without a GPU: which cases it runs, with the copy bandwidth measured once, how
their results go into one JSON written after each case, and how a case that fails is reported.
The timing of a case itself is faked here; on a GPU host it is real (see
../shared/gpu-host/README.md)."""

from __future__ import annotations

import json

import pytest

from emmy.tools import cli
from emmy.tools.bench import timing as bench


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr(cli, "require_gpu", lambda command: None)
    copies = []
    monkeypatch.setattr(bench, "device_copy_bandwidth", lambda: copies.append(1) or 4321.0)
    timed = []

    def gpu_results(source, program, module, bench, copy=None):
        timed.append((source, copy))
        correct = "GELU" not in source  # this program's emmy kernels are wrong here
        dtype = "bfloat16" if "torch.bfloat16" in source else "float32"
        return {
            "program": source,
            "dtype": dtype,
            "bytes": 1,
            "copy_bandwidth_gbps": copy,
            "backends": [
                {
                    "backend": "emmy",
                    "correct": correct,
                    "median_us": 5.0,
                    "error": None if correct else "output 0 differs",
                }
            ],
        }

    monkeypatch.setattr(cli, "gpu_results", gpu_results)
    return timed, copies


def test_selected_cases_share_one_copy_bandwidth_and_one_json(fake_gpu, tmp_path, capsys):
    timed, copies = fake_gpu
    path = tmp_path / "results.json"
    status = cli.main(
        ["bench", "--suite", "memory-bound", "--only", "^rms_norm 16x4096", "--json", str(path)]
    )
    assert status == 0
    assert len(copies) == 1
    assert [copy for _, copy in timed] == [4321.0, 4321.0]
    assert "dtype=torch.float32" in timed[0][0] and "dtype=torch.bfloat16" in timed[1][0]
    assert "(16, 4096)" in timed[0][0]
    document = json.loads(path.read_text())
    assert [(r["program"], r["shape"], r["dtype"]) for r in document["results"]] == [
        ("rms_norm", "16x4096", "float32"),
        ("rms_norm", "16x4096", "bfloat16"),
    ]
    assert "[2/2] rms_norm 16x4096 bfloat16" in capsys.readouterr().out


def test_a_given_copy_bandwidth_is_not_measured(fake_gpu):
    timed, copies = fake_gpu
    assert (
        cli.main(
            [
                "bench",
                "--suite",
                "memory-bound",
                "--only",
                "^softmax 8192x4096 float32$",
                "--copy-bandwidth",
                "4000",
            ]
        )
        == 0
    )
    assert copies == [] and [copy for _, copy in timed] == [4000.0]


def test_a_failing_case_fails_the_run_and_stays_in_the_json(fake_gpu, tmp_path):
    path = tmp_path / "results.json"
    status = cli.main(
        ["bench", "--suite", "memory-bound", "--only", "^gelu 16x4096", "--json", str(path)]
    )
    assert status == 1
    results = json.loads(path.read_text())["results"]
    assert len(results) == 2
    (row,) = results[0]["backends"]
    assert row["correct"] is False and row["error"] == "output 0 differs"


def test_no_matching_case_is_an_error(capsys):
    assert cli.main(["bench", "--suite", "memory-bound", "--only", "no such case"]) == 1
    assert "no case of suite memory-bound matches --only 'no such case'" in capsys.readouterr().err
