"""Cooperative tasks for the SIMT emulator: the two regions of a divergent `scf.if`, whose
threads may wait for each other at mbarriers, take turns, switching only where one blocks.

    scf.if %producer {
      kernel.mbarrier_wait %empty[%s], %p : !kernel.mbarrier<2>   // blocks: the else runs
      kernel.tma_load %map[%k, %c0], %tiles[%s, %c0, %c0], %full[%s] : ...
    } else {
      kernel.mbarrier_wait %full[%s], %q : !kernel.mbarrier<2>    // blocks: the then resumes
      ...
    }

Lockstep execution runs the then-region to its end, then the else-region, which would
deadlock here. So `run_if` `defer`s the else-region before it runs the then-region, and
`join`s it after: a deferred region that nothing started runs then, in the same Python
thread, exactly as lockstep execution runs it. Only when a task blocks (`block_until` a
condition that does not hold) does the scheduler hand its turn on: to the first parked task
whose condition holds now, else to the region deferred last, which starts in a Python
thread of its own, with its own interpreter scope chain (a shallow copy of the interpreter
whose scopes fork at the `scf.if`). One task runs at a time and the choice depends only on
the program, so runs are deterministic; a task's mask of active threads is the chunk's while
it runs (`block_until` restores it on resumption). Nothing runnable while some task is
blocked is a deadlock, reported as an error naming what each task waits for.
"""

from __future__ import annotations

import contextvars
import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.interpreter import Interpreter, PythonValues
from xdsl.utils.exceptions import InterpretationError


class _Abandoned(BaseException):
    """Unwinds a parked task's thread once the launch has failed in another task."""


@dataclass(eq=False)
class Deferred:
    """A region that runs after the one being run now, or beside it if that one blocks."""

    run: Callable[[Interpreter], PythonValues]
    interpreter: Interpreter
    scope: object
    """The interpreter's scope where the region was deferred, where a task running it starts."""
    context: contextvars.Context
    """The context variables (numpy's error state) where the region was deferred."""
    started: bool = False
    done: bool = False
    results: PythonValues = ()


@dataclass(eq=False)
class _Parked:
    ready: Callable[[], bool]
    describe: Callable[[], str] | None
    """What the task waits for; None for a task that only waits for a deferred region."""
    turn: bool = False


class Scheduler:
    """The tasks of one chunk of a launch; the thread that creates it is the root task."""

    def __init__(self, saved_state: Callable[[], Callable[[], None]]):
        self.saved_state = saved_state
        """Saves the running task's state (its mask) and gives back what restores it."""
        self.turns = threading.Condition()
        self.deferred: list[Deferred] = []
        self.parked: list[_Parked] = []
        self.threads: list[threading.Thread] = []
        self.failure: BaseException | None = None
        self.root = threading.current_thread()

    def defer(
        self, interpreter: Interpreter, run: Callable[[Interpreter], PythonValues]
    ) -> Deferred:
        deferred = Deferred(run, interpreter, interpreter._ctx, contextvars.copy_context())
        self.deferred.append(deferred)
        return deferred

    def join(self, deferred: Deferred, interpreter: Interpreter) -> PythonValues:
        """The results of a deferred region: run now, unless it started in a task of its own."""
        if not deferred.started:
            # Not necessarily the last: another task may have deferred regions since.
            self.deferred.remove(deferred)
            deferred.started = True
            return deferred.run(interpreter)
        self.block_until(lambda: deferred.done, None)
        return deferred.results

    def block_until(self, ready: Callable[[], bool], describe: Callable[[], str] | None) -> None:
        """Returns once `ready()` holds, letting other tasks run until then; `describe()` says
        what the task waits for, should that never come."""
        if ready():
            return
        restore = self.saved_state()
        parked = _Parked(ready, describe)
        with self.turns:
            self.parked.append(parked)
            self.hand_over()
            while not parked.turn:
                if self.failure is not None:
                    if threading.current_thread() is self.root:
                        raise self.failure
                    raise _Abandoned()
                self.turns.wait()
        restore()

    def hand_over(self) -> None:
        """Gives the turn to the next task (the caller holds `turns` and stops running)."""
        for parked in self.parked:
            if parked.ready():
                self.parked.remove(parked)
                parked.turn = True
                self.turns.notify_all()
                return
        if self.deferred:
            deferred = self.deferred.pop()
            deferred.started = True
            thread = threading.Thread(
                target=deferred.context.run, args=(self.run_task, deferred), daemon=True
            )
            self.threads.append(thread)
            thread.start()
            return
        waits = [parked.describe() for parked in self.parked if parked.describe is not None]
        self.fail(InterpretationError(f"deadlock: every task is blocked: {'; '.join(waits)}"))

    def run_task(self, deferred: Deferred) -> None:
        # The task that started this one runs until it waits for its turn.
        with self.turns:
            pass
        interpreter = copy.copy(deferred.interpreter)
        interpreter._ctx = deferred.scope
        try:
            deferred.results = deferred.run(interpreter)
        except _Abandoned:
            return
        except BaseException as error:
            with self.turns:
                self.fail(error)
            return
        with self.turns:
            deferred.done = True
            self.hand_over()

    def fail(self, error: BaseException) -> None:
        """Ends the launch: the root task raises `error`, the other tasks unwind (the caller
        holds `turns`)."""
        if self.failure is None:
            self.failure = error
        self.turns.notify_all()

    def close(self) -> None:
        """Unwinds the tasks still parked (after a failure) and waits for their threads."""
        with self.turns:
            if self.failure is None and self.parked:
                self.failure = InterpretationError("the launch ended with tasks still blocked")
            self.turns.notify_all()
        for thread in self.threads:
            thread.join()
