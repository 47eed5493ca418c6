"""emmy's tools, by layer: `frontend` (PyTorch in, Torch IR out), `interpreter` (every level on
the CPU), `cuda` (Kernel IR printed as CUDA C++), `runtime` (running it on the GPU) and `bench`
(timing and differential checks), under the executables `opt` (`emmy-opt`) and `cli` (`emmy`)."""
