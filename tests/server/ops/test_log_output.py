"""`server.ops.log_output`: a server's log lines go out in batches of whole lines, soon, in
order, never a line cut between two writes, and all of them at the end."""

from __future__ import annotations

import contextlib
import io
import select
import time

import pytest

from server.ops.log_output import BatchedLines


def test_lines_go_out_together_soon_after_the_first_and_in_order() -> None:
    writes: list[bytes] = []
    lines = BatchedLines(writes.append, delay=0.05)
    for number in range(100):
        lines.write(b"line %d\n" % number)
        lines.flush()  # what the logger does after each line: no write of its own
    assert writes == []
    deadline = time.monotonic() + 5
    while b"".join(writes).count(b"\n") < 100 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert b"".join(writes) == b"".join(b"line %d\n" % number for number in range(100))
    assert len(writes) < 10


def test_no_write_is_over_pipe_buf_or_cuts_a_line_but_a_long_line_goes_alone() -> None:
    writes: list[bytes] = []
    lines = BatchedLines(writes.append, delay=60)
    sent = [b"x" * (100 + 37 * number) + b"\n" for number in range(200)]
    sent.insert(50, b"y" * (select.PIPE_BUF * 2) + b"\n")
    for line in sent:
        lines.write(line)
    lines.drain()
    assert b"".join(writes) == b"".join(sent)
    for write in writes:
        assert write.endswith(b"\n")
        assert len(write) <= select.PIPE_BUF or write.count(b"\n") == 1


def test_an_output_that_is_gone_loses_the_lines_and_nothing_else() -> None:
    def closed(data: bytes) -> None:
        raise BrokenPipeError

    lines = BatchedLines(closed, delay=0.01)
    lines.write(b"said into the void\n")
    time.sleep(0.1)
    lines.write(b"and again\n")  # the writer lives on
    time.sleep(0.1)


def test_the_lines_go_to_the_process_output_even_while_a_command_line_captures_sys_stdout(
    capfd: pytest.CaptureFixture[str],
) -> None:
    lines = BatchedLines(delay=60)
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        lines.write(b'{"event":"appended"}\n')
        lines.drain()
    assert captured.getvalue() == ""
    assert capfd.readouterr().out == '{"event":"appended"}\n'
