"""What the console shows: log lines start lines of their own (never spliced into the progress bars), no bars
without a terminal, no HTTP request lines of the SDKs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from commands import bench
from fake_openai import FakeOpenAI


def test_no_http_request_lines_flood_the_console(tmp_path):
    with FakeOpenAI() as server:
        done = bench(tmp_path, "model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null",
                     "dataset.limit=1", "cache.enabled=false")
        assert server.stats()["requests"] > 0
    assert done.returncode == 0, done.stderr
    assert "HTTP Request" not in done.stdout + done.stderr
    log = next((tmp_path / "outputs").rglob("main.log")).read_text()
    assert "HTTP Request" not in log


def terminal_lines(text: str) -> list[str]:
    """The lines a terminal shows for ``text``: a carriage return goes back to the line's start and
    what follows overwrites it (progress bars redraw so); escape sequences dropped."""
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    shown = []
    for line in text.split("\n"):
        cells: list[str] = []
        column = 0
        for char in line:
            if char == "\r":
                column = 0
                continue
            if column < len(cells):
                cells[column] = char
            else:
                cells.append(char)
            column += 1
        shown.append("".join(cells).rstrip())
    return shown


def in_a_terminal(args: list[str], cwd: Path) -> str:
    """What ``python -m bench.main ARGS`` prints to a terminal (stdout and stderr on one pseudo-terminal
    of 120 columns, as a user sees them: the progress bars draw there)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "bench.main", *args], cwd=cwd, stdout=slave, stderr=slave,
                            stdin=subprocess.DEVNULL, env={k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(120)
    os.close(master)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode("utf-8", errors="replace")


def test_log_lines_are_not_spliced_into_the_progress_bars(tmp_path):
    shown = terminal_lines(in_a_terminal(["dataset.limit=3", "output_dir=job"], tmp_path))
    assert any("answer+judge" in line for line in shown)  # the bars were drawn
    logged = [line for line in shown if re.search(r"\]\[(INFO|WARNING|ERROR)\] - ", line)]
    assert len(logged) >= 3  # the job's own lines: what it runs, what it read, what it scored
    for line in logged:
        assert re.match(r"\[\d{4}-\d\d-\d\d [\d:,]+\]\[", line), line  # a log line starts its own line


def test_without_a_terminal_there_are_no_bars_and_a_refusal_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "bench.main", "dataset=chat", "dataset.path=missing.jsonl"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr == f"error: dataset file not found: {tmp_path / 'missing.jsonl'}\n"
