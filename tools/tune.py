"""`emmy tune`: times the candidate schedules of every kernel of a program on the GPU and records
the fastest correct one in the tuning database (`emmy.tools.tuning_database`), which
`choose-tile-schedule` then takes before its heuristic.

    $ emmy tune -c 'nn.RMSNorm(4096)(torch.randn(8192, 4096))' --budget 60s
    [1/1] @k_rms_norm: 96 candidates (successive halving)
      round 1: 96 timed, 3 reps each: best 11.84 us, heuristic 13.02 us
      ...
    @k_rms_norm: 11.84 us, heuristic 13.02 us (1.10x), 41 timed, 0 wrong: recorded

A kernel's candidates are `candidates(kernel, target)` (the heuristic's first). Each is
checked against eager PyTorch on fresh random inputs before it is timed; a wrong one (or one
that fails to compile or run) is dropped and reported. The program is timed whole (one CUDA
graph, as `emmy bench` times it), the other kernels keeping their schedules, so a candidate's
time is the program's.

The search (`search`): at most EXHAUSTIVE_LIMIT candidates are each timed once with
FINAL_REPS repetitions. More are searched by successive halving: every candidate is timed with
FIRST_REPS repetitions, the faster half is kept and timed again with twice the repetitions,
and so on until one is left; the heuristic's schedule is timed first in every round (kept or
not), so that the winner has beaten it at the same repetitions and a budget that runs out
still compares against it. `--budget` bounds the whole run: each kernel gets an
equal share of what is left when it starts, and a round stops at its kernel's deadline, the
best so far winning. `--verbose` prints every candidate's time and every drop.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from emmy.dialects import tile
from emmy.dialects.tile import Schedule

EXHAUSTIVE_LIMIT = 8
FIRST_REPS = 3
FINAL_REPS = 30

Measure = Callable[[Schedule, int], float]
"""Times a schedule with some repetitions: its median µs; raises `WrongSchedule` when its
outputs are wrong (or it cannot run)."""


class WrongSchedule(Exception):
    """A candidate's outputs differ from eager's, or it failed to compile or run."""


@dataclass
class SearchResult:
    best: Schedule | None
    best_us: float | None
    heuristic_us: float | None
    timed: int = 0
    """How many timings were made (a candidate kept for later rounds counts once a round)."""
    dropped: list[tuple[Schedule, str]] = field(default_factory=list)


def search(
    candidates: Sequence[Schedule],
    measure: Measure,
    deadline: float,
    log: Callable[[str], None],
    verbose: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> SearchResult:
    """The fastest correct schedule of `candidates` (the heuristic's first), found as the
    module docstring says, by `deadline` (on `clock`)."""
    heuristic = candidates[0]
    result = SearchResult(None, None, None)
    alive = list(candidates)
    exhaustive = len(alive) <= EXHAUSTIVE_LIMIT
    reps = FINAL_REPS if exhaustive else FIRST_REPS
    for round_number in itertools.count(1):
        times: list[tuple[float, int, Schedule]] = []
        for order, schedule in enumerate(alive):
            if clock() > deadline and times:
                log(f"  round {round_number}: the budget ran out after {len(times)} timed")
                break
            try:
                microseconds = measure(schedule, reps)
            except WrongSchedule as error:
                result.dropped.append((schedule, str(error)))
                log(f"  dropped (wrong): {tile.ScheduleAttr(schedule)}: {error}")
                continue
            result.timed += 1
            times.append((microseconds, order, schedule))
            if schedule == heuristic:
                result.heuristic_us = microseconds
            if verbose:
                log(f"    {microseconds:10.2f} us  {tile.ScheduleAttr(schedule)}")
        if not times:
            break
        times.sort(key=lambda entry: entry[:2])
        result.best_us, _, result.best = times[0]
        heuristic_figure = (
            f", heuristic {result.heuristic_us:.2f} us" if result.heuristic_us else ""
        )
        log(
            f"  round {round_number}: {len(times)} timed, {reps} reps each: best "
            f"{result.best_us:.2f} us{heuristic_figure}"
        )
        contenders = [schedule for _, _, schedule in times if schedule != heuristic]
        if exhaustive or len(contenders) <= 1 or clock() > deadline:
            break
        # The heuristic runs in every round, first, beside the faster half of the others, so
        # that the winner has beaten it at the same repetitions (few are noisy).
        timed = len(contenders) < len(times)
        alive = [heuristic] * timed + contenders[: math.ceil(len(contenders) / 2)]
        reps *= 2
    return result


def parse_duration(text: str) -> float:
    """Seconds of '90', '90s', '5m' or '1h'; a ValueError says what is wrong."""
    units = {"s": 1, "m": 60, "h": 3600}
    number, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "s")
    try:
        seconds = float(number) * units[unit]
    except ValueError:
        raise ValueError(f"'{text}' is not a duration (e.g. 90s, 5m, 1h)") from None
    if not seconds > 0 or math.isinf(seconds):
        raise ValueError(f"a budget is a positive duration, got '{text}'")
    return seconds


class ProgramOnDevice:
    """A program loaded once on the GPU with eager's outputs on fresh inputs; `measure`
    times it with one kernel under a given schedule."""

    def __init__(self, source: str, dtype: Any):
        from emmy.tools.bench.differential import lower
        from emmy.tools.bench.timing import prepare_program

        self.prepared = prepare_program(source, dtype)
        self.loop_ir = lower(self.prepared.torch_ir, "loop")
        self.reference = self.prepared.eager()

    def kernels(self) -> list[Any]:
        from emmy.dialects import loop

        return [op for op in self.loop_ir.body.block.ops if isinstance(op, loop.KernelOp)]

    def measurer(self, kernel_name: str) -> Measure:
        def measure(schedule: Schedule, reps: int) -> float:
            from emmy.tools.bench.timing import check_outputs
            from emmy.tools.bench.timing import measure as time_it
            from emmy.tools.runtime.host import GraphedHostProgram

            try:
                program = GraphedHostProgram(scheduled(self.loop_ir, kernel_name, schedule))
                check = check_outputs(program(self.prepared.forward_args), self.reference)
            except Exception as error:  # a candidate that cannot run is dropped, not fatal
                raise WrongSchedule(f"{type(error).__name__}: {error}") from None
            if not check["correct"]:
                raise WrongSchedule(check["error"])
            return time_it(lambda: program(self.prepared.forward_args), 3, reps)["median_us"]

        return measure


def scheduled(loop_ir: Any, kernel_name: str, schedule: Schedule) -> Any:
    """The Loop IR program `loop_ir` at the kernel level, as a `HostProgram`, its kernel
    `kernel_name` scheduled by `schedule` (the others as compiling schedules them)."""
    from emmy.dialects import loop, make_context
    from emmy.passes.pipelines import STAGES
    from emmy.tools.diagnostics import verify
    from emmy.tools.runtime.host import HostProgram

    module = loop_ir.clone()
    for op in module.body.block.ops:
        if isinstance(op, loop.KernelOp) and op.sym_name.data == kernel_name:
            op.attributes[tile.SCHEDULE_ATTRIBUTE] = tile.ScheduleAttr(schedule)
    ctx = make_context()
    for stage in (*STAGES["tile"], *STAGES["kernel"]):
        stage.apply(ctx, module)
    verify(module)
    return HostProgram(module)


def tune_program(
    source: str,
    dtype: Any,
    deadline: float,
    log: Callable[[str], None],
    verbose: bool = False,
    limit: int = 0,
    device_program: Callable[[str, Any], ProgramOnDevice] | None = None,
) -> list[tuple[str, SearchResult]]:
    """Tunes every kernel of `source` (loaded by `device_program`, by default a
    `ProgramOnDevice`) by `deadline`, recording each kernel's best correct schedule; returns
    each kernel's name and search."""
    from emmy.dialects.target import target_of
    from emmy.passes.choose_tile_schedule import candidates
    from emmy.tools.tuning_database import (
        TunedSchedule,
        TuningDatabase,
        emmy_version,
        kernel_key,
        normalised_kernel,
        today,
    )

    on_device = (device_program or ProgramOnDevice)(source, dtype)
    database = TuningDatabase()
    kernels = on_device.kernels()
    results = []
    for index, kernel in enumerate(kernels, 1):
        name = kernel.sym_name.data
        target = target_of(kernel)
        offered = candidates(kernel, target)[: limit or None]
        how = "exhaustive" if len(offered) <= EXHAUSTIVE_LIMIT else "successive halving"
        log(f"[{index}/{len(kernels)}] @{name}: {len(offered)} candidates ({how})")
        share = (deadline - time.monotonic()) / (len(kernels) - index + 1)
        result = search(offered, on_device.measurer(name), time.monotonic() + share, log, verbose)
        results.append((name, result))
        if result.best is None:
            log(f"@{name}: no candidate ran correctly: nothing recorded")
            continue
        database.record(
            TunedSchedule(
                key=kernel_key(kernel, target),
                arch=target.arch,
                emmy_version=emmy_version(),
                kernel=normalised_kernel(kernel),
                schedule=str(tile.ScheduleAttr(result.best)),
                time_us=result.best_us,
                heuristic_us=result.heuristic_us,
                candidates=result.timed,
                tuned_on=today(),
            )
        )
        speedup = f" ({result.heuristic_us / result.best_us:.2f}x)" if result.heuristic_us else ""
        heuristic = (
            f"heuristic {result.heuristic_us:.2f} us{speedup}"
            if result.heuristic_us
            else "heuristic wrong or untimed"
        )
        log(
            f"@{name}: {result.best_us:.2f} us, {heuristic}, {result.timed} timed, "
            f"{len(result.dropped)} wrong: recorded"
        )
    return results
