"""A fork server that runs the lit suite's `emmy-opt` and `emmy` commands without paying
Python's, xDSL's and torch's start-up in each of them.

    RUN: emmy-opt --torch-to-loop %s | filecheck %s
         ^ test/Output/forkserver-bin/emmy-opt: connects to the server, which forks a child
           that has xDSL, emmy and torch imported and runs `emmy.tools.opt.main` in it

lit.cfg.py starts `serve` once per lit run and puts executables named after the commands first
on the RUN lines' PATH. Each is a stdlib-only client that sends its standard streams (as file
descriptors), arguments, working directory and environment over a Unix socket and exits with
the status the child reports, so a command behaves as it would in a process of its own: the
same streams, files, environment and exit status, and nothing kept from an earlier command
(each child is a fresh fork of a server that never runs a command itself). When no server
answers, the client runs the real command instead. `EMMY_LIT_FORKSERVER=0` turns it off.
"""

from __future__ import annotations

import array
import importlib
import json
import os
import socket
import struct
import sys

COMMANDS = {"emmy-opt": "emmy.tools.opt", "emmy": "emmy.tools.cli"}
"""Each command and the module whose `main()` it runs, as pyproject.toml's scripts say."""

PRELOADED = (
    *COMMANDS.values(),
    "torch",
    "torch._dynamo",
    "torch.export",
    "emmy.tools.frontend.importer",
    "emmy.tools.frontend.program",
    "emmy.tools.interpreter.run",
    "emmy.tools.bench.differential",
)
"""What the server imports before it forks: what most commands would import themselves."""

_HEADER = struct.Struct("!I")
_STREAMS = (0, 1, 2)


def client(command: str, socket_path: str, fallback: str) -> None:
    """Runs `command` in a child of the server at `socket_path`, or `fallback` (the real
    executable) when there is none; exits with the command's status."""
    request = json.dumps(
        {"command": command, "argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
    ).encode()
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(socket_path)
    except OSError:
        os.execv(fallback, [fallback, *sys.argv[1:]])
    connection.sendmsg(
        [_HEADER.pack(len(request)), request],
        [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", _STREAMS))],
    )
    reply = b""
    while chunk := connection.recv(64):
        reply += chunk
    # No reply: the child died without reporting (a signal), as a crashed process would exit.
    sys.exit(int(reply) if reply else 134)


def serve(socket_path: str) -> None:
    """Answers clients until standard input (a pipe lit.cfg.py holds) reaches end of file, then
    removes the socket and the folder it is in."""
    for module in PRELOADED:
        try:
            importlib.import_module(module)
        except ImportError:
            pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    import selectors
    import signal

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ)
    events.register(sys.stdin.fileno(), selectors.EVENT_READ)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        while True:
            for key, _ in events.select():
                if key.fileobj != listener:
                    return
                connection, _ = listener.accept()
                if os.fork() == 0:
                    listener.close()
                    _run_in_child(connection)
                connection.close()
    finally:
        os.unlink(socket_path)
        os.rmdir(os.path.dirname(socket_path))


def _run_in_child(connection: socket.socket) -> None:
    status = 1
    try:
        fds: list[int] = []
        size = _HEADER.unpack(_receive_exactly(connection, _HEADER.size, fds))[0]
        request = json.loads(_receive_exactly(connection, size, fds))
        for stream, fd in zip(_STREAMS, fds, strict=True):
            os.dup2(fd, stream)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(  # noqa: SIM115
            2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False
        )
        sys.argv = [request["command"], *request["argv"]]
        _reseed()
        main = importlib.import_module(COMMANDS[request["command"]]).main
        try:
            status = main()
        except SystemExit as stop:
            status = stop.code
        if not isinstance(status, int):
            if status is not None:
                print(status, file=sys.stderr)
            status = 0 if status is None else 1
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        connection.sendall(str(status).encode())
        os._exit(0)


def _receive_exactly(connection: socket.socket, size: int, fds: list[int]) -> bytes:
    data = b""
    while len(data) < size:
        chunk, ancillary, _, _ = connection.recvmsg(size - len(data), socket.CMSG_SPACE(64))
        if not chunk:
            raise ConnectionError("the client left before sending its request")
        data += chunk
        for _, _, payload in ancillary:
            fds.extend(array.array("i", payload))
    return data


def _reseed() -> None:
    """Forked children would all continue the server's random streams; a process of its own
    starts from fresh entropy."""
    import random

    random.seed()
    if numpy := sys.modules.get("numpy"):
        numpy.random.seed()


if __name__ == "__main__":
    serve(sys.argv[2]) if sys.argv[1] == "serve" else sys.exit(f"usage: {sys.argv[0]} serve SOCKET")
