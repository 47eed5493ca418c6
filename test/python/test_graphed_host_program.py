"""`GraphedHostProgram`'s bookkeeping on the CPU, with a stand-in program whose "graph"
replays a Python function on the buffers it was captured with: which calls run as they are,
which capture and which replay; what is copied in before a replay and out after it. (The
same class on a GPU: `test_gpu_programs.py`.)"""

import pytest
import torch

from emmy.tools.runtime import host
from emmy.tools.runtime.host import GRAPHS_KEPT, GraphedHostProgram


class StandIn:
    """weight + rows: run as it is, or captured as a replay into its own output buffer."""

    def __init__(self):
        self.runs = 0
        self.captures = 0

    def __call__(self, inputs, timeout_s=None):
        self.runs += 1
        return [inputs[0] + inputs[1]]

    def graphed(self, inputs, then=None):
        self.captures += 1
        first = [inputs[0] + inputs[1]]  # the run that HostProgram.graphed makes first
        if then is not None:
            then(first)
        output = torch.empty_like(first[0])

        def replay():
            torch.add(inputs[0], inputs[1], out=output)
            if then is not None:
                then([output])
            return [output]

        return replay, first


@pytest.fixture(autouse=True)
def on_the_cpu(monkeypatch):
    monkeypatch.setattr(host, "_on_device", lambda value: value.contiguous())
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)


def test_a_key_runs_then_captures_then_replays_reading_moved_inputs_through_its_buffers():
    program = StandIn()
    graphed = GraphedHostProgram(program, static=[True, False], capture_at_second=True)
    weight = torch.randn(4)
    for call in range(4):
        rows = torch.randn(4)  # a new tensor every call
        torch.testing.assert_close(graphed([weight, rows])[0], weight + rows)
        assert (program.runs, program.captures) == ((1, 0) if call == 0 else (1, 1))


def test_without_capture_at_second_the_first_call_captures():
    program = StandIn()
    graphed = GraphedHostProgram(program)
    weight, rows = torch.randn(4), torch.randn(4)
    graphed([weight, rows])
    assert (program.runs, program.captures) == (0, 1)


def test_outputs_are_copies_where_asked_and_the_graphs_own_elsewhere():
    weight = torch.randn(4)
    copied = GraphedHostProgram(StandIn(), static=[True, False], copy_outputs=[True])
    own = GraphedHostProgram(StandIn(), static=[True, False], copy_outputs=[False])
    first_rows, second_rows = torch.randn(4), torch.randn(4)
    copied([weight, torch.randn(4)]), own([weight, torch.randn(4)])  # these capture
    kept, mine = copied([weight, first_rows])[0], own([weight, first_rows])[0]
    copied([weight, second_rows]), own([weight, second_rows])
    torch.testing.assert_close(kept, weight + first_rows)  # the next replay left it alone
    torch.testing.assert_close(mine, weight + second_rows)  # the graph's buffer, refilled


def test_a_static_input_elsewhere_is_a_new_key_and_old_captures_are_dropped():
    program = StandIn()
    graphed = GraphedHostProgram(program, static=[True, False])
    rows = torch.randn(4)
    weights = [torch.randn(4) for _ in range(GRAPHS_KEPT + 1)]
    for weight in weights:
        torch.testing.assert_close(graphed([weight, rows])[0], weight + rows)
    assert program.captures == GRAPHS_KEPT + 1 and len(graphed._captures) == GRAPHS_KEPT
    graphed([weights[0], rows])  # dropped: captured again
    assert program.captures == GRAPHS_KEPT + 2


@pytest.mark.parametrize("guarded", [False, True])
def test_new_shapes_of_moved_inputs_and_new_static_addresses_capture_again(guarded):
    """Dynamo's guards (`guarded`) keep static shapes, dtypes and devices: the key is then the
    static addresses and the other inputs' shapes, and captures as the whole key does."""
    program = StandIn()
    graphed = GraphedHostProgram(program, static=[True, False], guarded=guarded)
    weights = [torch.randn(1), torch.randn(1)]
    calls = [(weights[0], 4), (weights[0], 4), (weights[0], 8), (weights[1], 8), (weights[0], 4)]
    captured = []
    for weight, size in calls:
        rows = torch.randn(size)
        torch.testing.assert_close(graphed([weight, rows])[0], weight + rows)
        captured.append(program.captures)
    assert captured == [1, 1, 2, 3, 3]


class Accumulates:
    """total += rows in place, the result in the argument's buffer (as
    `place-results-in-arguments` makes a KV cache's update): running it twice for one call
    would add twice."""

    def __call__(self, inputs, timeout_s=None):
        return [inputs[0].add_(inputs[1])]

    def graphed(self, inputs, then=None):
        first = self(inputs)

        def replay():
            return self(inputs)

        return replay, first


def test_the_call_that_captures_returns_its_run_and_replays_nothing():
    graphed = GraphedHostProgram(Accumulates(), static=[True, False], write_back=[0])
    total, rows = torch.zeros(4), torch.ones(4)
    for call in range(1, 4):
        (result,) = graphed([total, rows])
        assert result is total
        torch.testing.assert_close(total, torch.full((4,), float(call)))


def test_under_a_callers_capture_the_program_runs_as_it_is(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    program = StandIn()
    graphed = GraphedHostProgram(program)
    for _ in range(2):
        graphed([torch.randn(4), torch.randn(4)])
    assert (program.runs, program.captures) == (2, 0)


def test_an_output_written_back_is_copied_into_its_static_input_and_returned_as_it():
    """A KV cache's new value: the graph copies it into the cache (input 0), and the call
    returns the cache itself, so that AOTAutograd's copy of one into the other copies
    nothing."""
    graphed = GraphedHostProgram(StandIn(), static=[True, False], write_back=[0])
    cache = torch.zeros(4)
    for step in range(1, 4):
        rows = torch.full((4,), 1.0)
        (result,) = graphed([cache, rows])
        assert result is cache
        torch.testing.assert_close(cache, torch.full((4,), float(step)))
