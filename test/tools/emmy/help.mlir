// Each command's help says what it does (COLUMNS: argparse wraps to the terminal's width).

// RUN: emmy --help | filecheck %s --check-prefix=TOP
// TOP: usage: emmy [-h] [--version] COMMAND ...
// TOP: compile   print a PyTorch program at one IR level
// TOP: run       check every IR level of a PyTorch program against PyTorch eager
// TOP: bench     time a benchmark suite on the GPU
// TOP: exec      run an IR file on the CPU interpreter

// RUN: env COLUMNS=1000 emmy run --help | filecheck %s --check-prefix=RUN-HELP
// RUN-HELP: Run the program at each of its 6 levels (torch, prim, fused, loop, tile, kernel)
// RUN-HELP-SAME: Each level's start is reported on stderr. Tolerances: an element passes within atol + rtol * |eager|

// RUN: env COLUMNS=1000 emmy compile --help | filecheck %s --check-prefix=COMPILE
// COMPILE: the level to print: torch, prim, fused, loop, tile, kernel, or cuda
// COMPILE: The Torch IR of each program is cached
// COMPILE-SAME: EMMY_NO_CACHE=1 turns the cache off

// RUN: env COLUMNS=1000 emmy exec --help | filecheck %s --check-prefix=EXEC
// EXEC: Run a host function of an IR file, at any level from torch to kernel, on the CPU interpreter
// EXEC: integers from 0 to 15 or, for one that indexes a dim such as an embedding's indices, below its size
