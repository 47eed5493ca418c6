"""Autotuning without a GPU: the tuning database (keys, private files, several writers, corrupt
and foreign files, export and import), `choose-tile-schedule` taking a tuned schedule before
its heuristic (and showing it), the search (exhaustive, successive halving, wrong candidates,
the budget) and `emmy tune` end to end with the GPU's timing faked. On a GPU host the timing is
real (`emmy tune` there is run by hand: ../shared/gpu-host/README.md)."""

from __future__ import annotations

import json
import multiprocessing
import stat
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

from emmy.dialects import loop, tile
from emmy.dialects.target import known_target, target_of
from emmy.passes.choose_tile_schedule import candidates, choose_schedule
from emmy.tools import cli, tune, tuning_database
from emmy.tools.bench.differential import lower
from emmy.tools.frontend.program import load_program
from emmy.tools.tuning_database import (
    TunedSchedule,
    TuningDatabase,
    TuningDatabaseWarning,
    emmy_version,
    kernel_key,
    normalised_kernel,
    today,
)

RMS_NORM = "nn.RMSNorm(64)(torch.randn(8, 64))"


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """A database of each test's own: one that others' compiles would take schedules from
    would make them depend on the order tests run in. No shipped tuning but the test's."""
    monkeypatch.setenv("EMMY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tuning_database, "SHIPPED_DIRECTORY", tmp_path / "shipped")
    tuning_database.shipped.cache_clear()
    yield
    tuning_database.shipped.cache_clear()


def loop_kernels(source: str) -> list[loop.KernelOp]:
    module = lower(load_program(source, "<tune>").to_torch_ir(), "loop")
    return [op for op in module.body.block.ops if isinstance(op, loop.KernelOp)]


def entry(kernel: loop.KernelOp, schedule: tile.Schedule, time_us: float = 1.5) -> TunedSchedule:
    target = target_of(kernel)
    return TunedSchedule(
        kernel_key(kernel, target),
        target.arch,
        emmy_version(),
        normalised_kernel(kernel),
        str(tile.ScheduleAttr(schedule)),
        time_us,
        2.0,
        7,
        today(),
    )


def other_schedule(kernel: loop.KernelOp) -> tile.Schedule:
    """A schedule of `kernel` that is not the heuristic's (and lowers)."""
    heuristic = choose_schedule(kernel, target_of(kernel))
    return next(s for s in candidates(kernel, target_of(kernel)) if s != heuristic)


# -- the database --


def test_a_kernel_is_keyed_by_its_structure_shapes_and_target_not_its_names():
    (norm,) = loop_kernels(RMS_NORM)
    (renamed,) = loop_kernels(
        "class Norm(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.n = nn.RMSNorm(64)\n    def forward(self, y):\n        return self.n(y)\n"
        "Norm()(torch.randn(8, 64))\n"
    )
    (wider,) = loop_kernels("nn.RMSNorm(128)(torch.randn(8, 128))")
    target = target_of(norm)
    assert kernel_key(norm, target) == kernel_key(renamed, target)
    assert kernel_key(norm, target) != kernel_key(wider, target)
    assert kernel_key(norm, target) != kernel_key(norm, known_target("sm_80"))
    assert "@kernel" in normalised_kernel(norm) and "tile.schedule" not in normalised_kernel(norm)


def test_entries_are_recorded_looked_up_and_replaced_in_a_private_file(tmp_path):
    database = TuningDatabase(tmp_path / "cache" / "tuning.sqlite3")
    (kernel,) = loop_kernels(RMS_NORM)
    first = entry(kernel, other_schedule(kernel), 3.0)
    assert database.lookup(first.key) is None and not database.path.exists()
    database.record(first)
    assert database.lookup(first.key) == first
    database.record(replace(first, time_us=2.5))
    assert database.lookup(first.key).time_us == 2.5 and len(database.entries()) == 1
    assert stat.S_IMODE(database.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(database.path.parent.stat().st_mode) == 0o700


def _record_many(path: str, writer: int) -> None:
    database = TuningDatabase(Path(path))
    for index in range(25):
        database.record(
            TunedSchedule(f"{writer}-{index}", "sm_90a", "v", "k", "s", 1.0, None, 1, "2026")
        )


def test_several_processes_write_at_once(tmp_path):
    path = tmp_path / "tuning.sqlite3"
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_record_many, args=(str(path), w)) for w in range(4)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(120)
        assert process.exitcode == 0
    assert len(TuningDatabase(path).entries()) == 100


@pytest.mark.parametrize("content", [b"not a database at all" * 100, b""], ids=["corrupt", "empty"])
def test_a_file_that_is_not_the_database_is_ignored_then_moved_aside(tmp_path, content):
    path = tmp_path / "tuning.sqlite3"
    path.write_bytes(content)
    database = TuningDatabase(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert database.lookup("key") is None
    # An empty file is a database being created, not a broken one.
    assert [str(w.message) for w in caught if w.category is TuningDatabaseWarning] == (
        [f"the tuning database {path} is not usable (file is not a database): it is ignored"]
        if content
        else []
    )
    entry_ = TunedSchedule("key", "sm_90a", "v", "k", "s", 1.0, None, 1, "2026-12-05")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        database.record(entry_)
    assert database.lookup("key") == entry_
    assert path.with_name("tuning.sqlite3.bad").exists() == bool(content)
    assert len(caught) == bool(content)


def test_a_database_of_another_schema_version_is_not_read(tmp_path):
    import sqlite3

    path = tmp_path / "tuning.sqlite3"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE schedules (key TEXT)")
        connection.execute("PRAGMA user_version = 99")
    with pytest.warns(TuningDatabaseWarning, match="schema version 99, not 1"):
        assert TuningDatabase(path).entries() == []


def test_the_fingerprint_that_caches_of_lowered_ir_key_on_changes_with_each_record():
    from emmy.tools.tuning_database import fingerprint

    assert fingerprint() == ""
    (kernel,) = loop_kernels(RMS_NORM)
    database = TuningDatabase()
    database.record(entry(kernel, other_schedule(kernel), 3.0))
    first = fingerprint()
    database.record(entry(kernel, other_schedule(kernel), 2.0))
    assert first != "" and fingerprint() not in ("", first)


def test_export_and_import_move_entries_between_databases(tmp_path):
    source, target = TuningDatabase(tmp_path / "a.sqlite3"), TuningDatabase(tmp_path / "b.sqlite3")
    (kernel,) = loop_kernels(RMS_NORM)
    recorded = entry(kernel, other_schedule(kernel))
    source.record(recorded)
    exported = tmp_path / "tuning.json"
    assert source.export(exported) == 1
    assert json.loads(exported.read_text())["entries"][0]["schedule"] == recorded.schedule
    assert target.import_file(exported) == 1
    assert target.lookup(recorded.key) == recorded
    exported.write_text('{"entries": []}')
    with pytest.raises(ValueError, match="not an emmy tuning export of version 1"):
        target.import_file(exported)


# -- choose-tile-schedule takes it --


def test_compile_takes_a_tuned_schedule_and_says_so(capsys):
    (kernel,) = loop_kernels(RMS_NORM)
    tuned = other_schedule(kernel)
    TuningDatabase().record(entry(kernel, tuned, 1.25))
    assert cli.main(["compile", "-c", RMS_NORM, "--ir", "tile"]) == 0
    tile_ir = capsys.readouterr().out
    assert str(tile.ScheduleAttr(tuned)) in tile_ir
    assert f'tile.tuned = "1.25 us on sm_90a (heuristic 2.00 us), {today()}"' in tile_ir


def test_compile_takes_the_shipped_tuning_after_the_users(capsys, tmp_path):
    """The architecture's shipped export gives a kernel the user's database lacks its tuned
    schedule (and says it is shipped); the user's own entry wins over it; a shipped file that
    is not an export is ignored with a warning."""
    (kernel,) = loop_kernels(RMS_NORM)
    shipped, *others = candidates(kernel, target_of(kernel))[1:]
    exporter = TuningDatabase(tmp_path / "tuned-on-a-gpu.sqlite3")
    exporter.record(entry(kernel, shipped, 1.25))
    tuning_database.SHIPPED_DIRECTORY.mkdir()
    exporter.export(tuning_database.SHIPPED_DIRECTORY / "sm_90a.json")
    assert cli.main(["compile", "-c", RMS_NORM, "--ir", "tile"]) == 0
    tile_ir = capsys.readouterr().out
    assert str(tile.ScheduleAttr(shipped)) in tile_ir
    assert f'tile.tuned = "shipped: 1.25 us on sm_90a (heuristic 2.00 us), {today()}"' in tile_ir
    users = next(s for s in others if s != shipped)
    TuningDatabase().record(entry(kernel, users, 1.0))
    assert cli.main(["compile", "-c", RMS_NORM, "--ir", "tile"]) == 0
    tile_ir = capsys.readouterr().out
    assert str(tile.ScheduleAttr(users)) in tile_ir and "shipped" not in tile_ir
    (tuning_database.SHIPPED_DIRECTORY / "sm_90a.json").write_text("{not json")
    tuning_database.shipped.cache_clear()
    TuningDatabase().path.unlink()
    with pytest.warns(TuningDatabaseWarning, match="the shipped tuning is ignored"):
        assert cli.main(["compile", "-c", RMS_NORM, "--ir", "tile"]) == 0
    heuristic = choose_schedule(kernel, target_of(kernel))
    assert str(tile.ScheduleAttr(heuristic)) in capsys.readouterr().out


def test_the_heuristic_stays_where_the_database_has_nothing_that_lowers(capsys, tmp_path):
    (kernel,) = loop_kernels(RMS_NORM)
    heuristic = choose_schedule(kernel, target_of(kernel))
    stale = replace(heuristic, loops=(((7,), tile.LoopSchedule(tile.Mapping.GRID)),), stages=())
    TuningDatabase().record(entry(kernel, stale))
    assert cli.main(["compile", "-c", RMS_NORM, "--ir", "tile"]) == 0
    tile_ir = capsys.readouterr().out
    assert str(tile.ScheduleAttr(heuristic)) in tile_ir and "tile.tuned" not in tile_ir


def test_emmy_opt_can_leave_the_database_out(tmp_path, capsys):
    from emmy.tools.opt import main as emmy_opt

    (kernel,) = loop_kernels(RMS_NORM)
    TuningDatabase().record(entry(kernel, other_schedule(kernel)))
    module = lower(load_program(RMS_NORM, "<tune>").to_torch_ir(), "loop")
    path = tmp_path / "loop.mlir"
    path.write_text(str(module))
    for spec, tuned in (
        ("choose-tile-schedule", True),
        ("choose-tile-schedule{tuned=false}", False),
        ("choose-tile-schedule{block-size=64}", False),
    ):
        assert emmy_opt([str(path), "-p", spec]) == 0
        assert ("tile.tuned" in capsys.readouterr().out) == tuned, spec


# -- the search --


def schedules(count: int) -> list[tile.Schedule]:
    return [tile.Schedule(block=(32 * (i + 1), 1, 1), loops=()) for i in range(count)]


def fake_measure(times: dict[int, float], wrong: set[int] = frozenset(), calls=None):
    def measure(schedule: tile.Schedule, reps: int) -> float:
        if calls is not None:
            calls.append((schedule.block[0], reps))
        if schedule.block[0] in wrong:
            raise tune.WrongSchedule("output 0 differs")
        return times[schedule.block[0]]

    return measure


def test_few_candidates_are_each_timed_once_with_the_final_repetitions():
    offered = schedules(5)
    times = {s.block[0]: t for s, t in zip(offered, [9.0, 4.0, 7.0, 3.0, 8.0])}
    calls, lines = [], []
    result = tune.search(offered, fake_measure(times, calls=calls), float("inf"), lines.append)
    assert result.best.block[0] == 128 and result.best_us == 3.0 and result.heuristic_us == 9.0
    assert calls == [(s.block[0], tune.FINAL_REPS) for s in offered]


def test_many_candidates_are_halved_round_by_round_and_wrong_ones_dropped():
    offered = schedules(20)
    times = {s.block[0]: 100.0 - i for i, s in enumerate(offered)}  # the last is fastest
    calls, lines = [], []
    wrong = {offered[-1].block[0]}
    measure = fake_measure(times, wrong, calls)
    result = tune.search(offered, measure, float("inf"), lines.append)
    assert result.best == offered[-2] and result.heuristic_us == 100.0
    assert result.dropped == [(offered[-1], "output 0 differs")]
    # The 18 right ones besides the heuristic halved down to one, the heuristic in each round.
    assert result.timed == 19 + 10 + 6 + 4 + 3 + 2
    assert [reps for _, reps in calls[:20]] == [tune.FIRST_REPS] * 20
    assert calls[-2:] == [
        (32, tune.FIRST_REPS * 2**5),
        (offered[-2].block[0], tune.FIRST_REPS * 2**5),
    ]
    assert any(line.startswith("  dropped (wrong): #tile.schedule<block [640") for line in lines)


def test_a_candidate_must_beat_the_heuristic_at_the_same_repetitions():
    """Candidate 2 looks fastest at few repetitions (noise), then slower than the heuristic
    at more: the heuristic, timed in every round, wins the last one."""
    offered = schedules(12)
    first = {s.block[0]: 10.0 + i for i, s in enumerate(offered)}
    first[offered[2].block[0]] = 5.0

    def measure(schedule: tile.Schedule, reps: int) -> float:
        if schedule == offered[2] and reps > tune.FIRST_REPS:
            return 10.5
        return first[schedule.block[0]]

    result = tune.search(offered, measure, float("inf"), [].append)
    assert result.best == offered[0] and result.best_us == result.heuristic_us == 10.0


def test_the_budget_stops_the_search_with_the_best_so_far():
    offered = schedules(20)
    times = {s.block[0]: 100.0 - i for i, s in enumerate(offered)}
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0
        return now[0]

    lines = []
    result = tune.search(offered, fake_measure(times), 6.0, lines.append, clock=clock)
    assert result.timed == 6 and result.best == offered[5] and result.heuristic_us == 100.0
    assert "  round 1: the budget ran out after 6 timed" in lines


def test_a_candidate_is_lowered_with_its_kernel_under_the_schedule_timed():
    module = lower(load_program(RMS_NORM, "<tune>").to_torch_ir(), "loop")
    (kernel,) = [op for op in module.body.block.ops if isinstance(op, loop.KernelOp)]
    heuristic = choose_schedule(kernel, target_of(kernel))
    timed = next(s for s in candidates(kernel, target_of(kernel)) if s.block != heuristic.block)
    program = tune.scheduled(module, kernel.sym_name.data, timed)
    (launch,) = [op for op in program.module.walk() if op.name == "kernel.launch"]
    assert tuple(launch.block_shape) == timed.block
    assert tile.SCHEDULE_ATTRIBUTE not in kernel.attributes  # the Loop IR is left as it was


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90.0), ("90s", 90.0), ("5m", 300.0), ("1.5h", 5400.0)]
)
def test_durations(text, seconds):
    assert tune.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "m", "ten", "0", "-5s", "inf"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        tune.parse_duration(text)


# -- emmy tune --


class FakeDevice(tune.ProgramOnDevice):
    """The program's real Loop IR kernels, timed by a formula (a larger block is faster),
    with one wrong candidate per kernel: the GPU's part of `ProgramOnDevice`, faked."""

    instances: list[FakeDevice] = []

    def __init__(self, source: str, dtype):
        self.source, self.dtype = source, dtype
        text = source.replace("DT", f"torch.{str(dtype).removeprefix('torch.')}")
        self.loop_ir = lower(load_program(text, "<tune>").to_torch_ir(), "loop")
        FakeDevice.instances.append(self)

    def measurer(self, kernel_name: str):
        def measure(schedule: tile.Schedule, reps: int) -> float:
            if schedule.block[0] == 1024:
                raise tune.WrongSchedule("output 0 differs")
            vector = max(s.vector for _, s in schedule.loops)
            return 1000.0 / schedule.block[0] + 1.0 / vector

        return measure


@pytest.fixture
def fake_device(monkeypatch):
    monkeypatch.setattr(cli, "require_gpu", lambda command: None)
    monkeypatch.setattr(tune, "ProgramOnDevice", FakeDevice)
    FakeDevice.instances.clear()
    return FakeDevice


def test_tune_records_the_fastest_correct_schedule_which_compile_then_takes(fake_device, capsys):
    assert cli.main(["tune", "-c", RMS_NORM, "--budget", "5m"]) == 0
    out = capsys.readouterr().out
    assert "[1/1] @k_rms_norm: " in out and "(successive halving)" in out
    assert "@k_rms_norm: " in out and "recorded" in out
    (kernel,) = loop_kernels(RMS_NORM)
    recorded = TuningDatabase().lookup(kernel_key(kernel, target_of(kernel)))
    assert "block [512, 1, 1]" in recorded.schedule and "vector 4" in recorded.schedule
    assert recorded.heuristic_us is not None and recorded.time_us < recorded.heuristic_us
    assert cli.main(["compile", "-c", RMS_NORM, "--ir", "tile"]) == 0
    assert recorded.schedule in capsys.readouterr().out


def test_tune_a_suite_case(fake_device, capsys):
    status = cli.main(["tune", "--suite", "memory-bound", "--only", "^softmax 16x4096 bfloat16$"])
    assert status == 0
    (device,) = fake_device.instances
    assert device.dtype == "bfloat16" and "DT" in device.source
    assert "softmax 16x4096 bfloat16:" in capsys.readouterr().out


def test_export_then_import_on_the_command_line(fake_device, tmp_path, capsys, monkeypatch):
    assert cli.main(["tune", "-c", RMS_NORM, "--limit", "4"]) == 0
    exported = tmp_path / "tuned.json"
    assert cli.main(["tune", "--export", str(exported)]) == 0
    assert f"1 tuned schedule written to {exported}" in capsys.readouterr().out
    monkeypatch.setenv("EMMY_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert cli.main(["tune", "--import", str(exported)]) == 0
    assert "1 tuned schedule imported into " in capsys.readouterr().out
    assert len(TuningDatabase().entries()) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tune", "-c", RMS_NORM, "--budget", "soon"], "error: --budget: 'soon' is not a duration"),
        (["tune", "--suite", "nope"], "error: no suite 'nope'"),
        (["tune", "--import", "/no/such/file.json"], "error: /no/such/file.json: "),
        (["tune", "-c", RMS_NORM, "--limit", "-1"], "error: --limit is a number of candidates"),
    ],
)
def test_bad_tune_commands_are_one_line_errors(fake_device, argv, message, capsys):
    assert cli.main(argv) == 1
    assert capsys.readouterr().err.startswith(message)


def test_tune_needs_a_gpu(capsys, monkeypatch):
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    assert cli.main(["tune", "-c", RMS_NORM]) == 1
    assert "emmy tune runs on a CUDA GPU" in capsys.readouterr().err
