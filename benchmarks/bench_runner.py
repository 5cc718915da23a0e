"""Runner efficiency: a 20-case job against a loopback server with a fixed latency per reply.

``tests/support/fake_openai.py`` runs in its own process and answers every chat request after
``--latency`` seconds (default 0.2): an answering request gets a ``finish`` call (so each
answer costs exactly one model call), a judge request (``response_format: json_object``)
a JSON verdict. The job is the real one (``bench.runner.run`` on a composed config:
``model=openai`` pointed at the fake, ``arm=full``, ``judge=llm`` on the same server
(``--judge exact`` for answers only), response cache off), on ``--cases`` cases made by
repeating the rows of ``dev.parquet`` with distinct ids, at each ``model.max_concurrency``
in ``--concurrency`` (the judge gets the same limit).

Printed per concurrency C:

* ``wall``: the whole ``run()`` (set-up, dataset loading, answering, metrics);
* ``phase``: the answering and judging phase only (``Pipeline.run_phase`` of the arm), what concurrency
  can speed up;
* ``ideal`` = calls x latency / C, ``wall/ideal`` (what a user waits, set-up and loading
  included) and ``phase/ideal`` (target <= 1.1 at 16);
* ``bound``: the best ratio the work units allow with free client CPU (quantization):
  the runner's tasks (one per answer, one per judging, a judging queued when its answer
  is written) replayed first-come first-served on C workers at exactly ``--latency`` per
  call; n one-call tasks on C slots take ceil(n / C) rounds, not n / C;
* ``floor``: the same request bodies (as the server received them in that job), replayed
  by C bare ``httpx`` threads in the same order (answers first, a judgment queued when its
  answer returns), with no client work: the harness's own ratio (loopback, the fake
  server's Python, this machine). ``phase/floor`` is then the runner's own overhead
  (LangGraph, LangChain, the SDK, records, GIL hand-offs).
* ``call ms``: mean latency of a call as the client measured it (the server's part is
  exactly ``--latency``), and the process CPU per call (the whole ``run()``); ``phase
  CPU/answer``: the process CPU of the answering and judging phase over its answering calls
  (judging calls included in the CPU); at the end, the most requests the server saw in flight at once.

``--floor-cpu 0,1,2,4`` also replays the last job's requests with that much pure-Python
CPU (holding the GIL) before each request: what client CPU per call costs at this
concurrency (it depends on the latency: the same CPU is a larger share of a shorter
call). ``--bare`` also runs the last job with the answering agent and the judge
replaced by bare ``httpx`` posts of the same bodies: the runner's own machinery (tasks,
events, records) without the LangGraph/LangChain/openai-SDK stack, its ratio and its phase CPU
per answer (the difference with the job's is what that stack costs per call).

``--profile`` profiles the model calls of the concurrency-1 run.

    uv run python benchmarks/bench_runner.py [--latency 0.2] [--cases 20] [--concurrency 1,4,16]
        [--judge llm|exact] [--data dev|sample|FILE] [--floor-cpu 0,1,2,4] [--bare] [--profile]
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")  # before tqdm is imported: no progress bars here

import argparse
import cProfile
import heapq
import io
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import compose, fake_server, make_cases_file, quiet, resolve_data  # noqa: E402


def schedule_bound(questions: list[tuple[int, int]], workers: int) -> int:
    """Makespan in calls of the runner's work units with free CPU: ``questions`` are (answer
    calls, judge calls) in submission order; answer tasks are queued first, a judge task is
    queued when its answer ends; a free worker takes the oldest queued task (FIFO)."""
    from collections import deque

    queue = deque(("answer", a, j) for a, j in questions)
    running: list[tuple[int, int, tuple]] = []  # (end, tie-breaker, task)
    now, idle, seq = 0, workers, 0
    while queue or running:
        while idle and queue:
            kind, a, j = queue.popleft()
            heapq.heappush(running, (now + (a if kind == "answer" else j), seq, (kind, a, j)))
            seq += 1
            idle -= 1
        now, _, (kind, a, j) = heapq.heappop(running)
        idle += 1
        if kind == "answer":
            queue.append(("judge", a, j))
    return now


def is_judgment(body: bytes) -> bool:
    """A judge request (the LLM judge asks for a JSON object); anything else is an answering one."""
    return b'"response_format"' in body


def poster(url: str, connections: int):
    """``(client, send)``: an httpx client and ``send(body)``, a bare chat-completions POST."""
    import httpx

    client = httpx.Client(limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
                          timeout=60)

    def send(body: bytes) -> None:
        client.post(url + "/chat/completions", content=body, headers={"Content-Type": "application/json"}).read()

    return client, send


def replay_floor(url: str, bodies: list[bytes], workers: int, latency: float, cpu_ms: float = 0.0) -> float:
    """Wall time / ideal of ``bodies`` posted by ``workers`` bare httpx threads, no client work.

    Answer bodies are queued first (in arrival order); each answer that returns queues the
    next judge body (``response_format`` requests), the runner's schedule. ``cpu_ms``: pure
    Python work (holding the GIL) before each request, to see what client CPU costs.
    """
    import threading
    from collections import deque

    queue_ = deque(("a", b) for b in bodies if not is_judgment(b))
    judges = deque(b for b in bodies if is_judgment(b))
    ready = threading.Condition()
    remaining = [len(bodies)]
    client, send = poster(url, workers + 4)

    def burn() -> None:
        until = time.thread_time() + cpu_ms / 1000
        while time.thread_time() < until:
            pass

    def post(body: bytes) -> None:
        burn()
        send(body)

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as pool:  # open the connections, one per worker, at once
        list(pool.map(send, bodies[:workers]))

    def worker() -> None:
        while True:
            with ready:
                while not queue_ and remaining[0] > 0:
                    ready.wait()
                if not queue_:
                    return
                kind, body = queue_.popleft()
            post(body)
            with ready:
                remaining[0] -= 1
                if kind == "a" and judges:
                    queue_.append(("j", judges.popleft()))
                ready.notify_all()

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.close()
    return (time.perf_counter() - start) / (len(bodies) * latency / workers)


def bare_run(url: str, bodies: list[bytes], bare: dict, run_job, phase: dict, ideal: float) -> float:
    """The runner's own machinery (tasks, events, records) with each answer and judgment a
    bare httpx post of one captured body: what the LangGraph/LangChain/SDK stack adds is the
    difference with the real run."""
    import threading
    from collections import deque

    from bench.store.schema import Answer, Score

    answers = deque(b for b in bodies if not is_judgment(b))
    judgments = deque(b for b in bodies if is_judgment(b))
    lock = threading.Lock()
    client, send = poster(url, 64)

    def post(pool: deque) -> None:
        with lock:
            body = pool[0]
            pool.rotate(-1)
        send(body)

    class Judge:
        def score(self, question, answer, repo_root):  # noqa: ANN001, ANN201
            if judgments:  # none under --judge exact: the judgment is then free
                post(judgments)
            return Score(case_id=answer.case_id, qid=answer.qid, type=answer.type, verdict="wrong", reason="bare")

    def answer(case, view, question):  # noqa: ANN001, ANN202
        post(answers)
        return Answer(case_id=case.case_id, qid=question.qid, type=question.type, answer="bare")

    bare.update(answer=answer, judge=Judge())
    try:
        run_job()
    finally:
        bare.clear()
        client.close()
    return phase["answer"] / ideal


def sdk_baseline(url: str, latency: float, threads: int = 16, per_thread: int = 4) -> tuple[float, float]:
    """The bare openai SDK against the same server: (wall s, ideal s) of small requests in waves of ``threads``."""
    from concurrent.futures import ThreadPoolExecutor

    import openai

    client = openai.OpenAI(base_url=url, api_key="none", max_retries=0)
    one = lambda i: client.chat.completions.create(model="m", messages=[{"role": "user", "content": f"q{i}"}])  # noqa: E731
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(threads)))  # open the connections
        start = time.perf_counter()
        list(pool.map(one, range(threads * per_thread)))
    return time.perf_counter() - start, latency * per_thread


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per reply of the fake server")
    parser.add_argument("--cases", type=int, default=20, help="cases in the job")
    parser.add_argument("--concurrency", default="1,4,16", help="comma list of model.max_concurrency values")
    parser.add_argument("--judge", default="llm", choices=("llm", "exact"),
                        help="llm: the LLM judge on the same server (a second call per answer); exact: answers only")
    parser.add_argument("--data", default="dev",
                        help="rows to repeat: dev (tests/data/real/dev.parquet), sample (shipped) or a FILE")
    parser.add_argument("--floor-cpu", default="",
                        help="comma list of ms: also replay the last job's requests with that much pure-Python "
                             "CPU per request (what client CPU per call costs at this concurrency)")
    parser.add_argument("--bare", action="store_true",
                        help="also run the last job with the agent and the judge replaced by bare httpx posts of "
                             "the same request bodies: the runner's structure without the LangGraph/LangChain/SDK stack")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the answering calls (worker threads) at concurrency 1 and print the top")
    args = parser.parse_args(argv)
    data_path = resolve_data(args.data)
    if not data_path.exists():
        print(f"error: dataset not found: {data_path} (pass --data FILE)", file=sys.stderr)
        return 2
    quiet()
    import bench.runner as runner
    from bench.runner.pipeline import Pipeline

    levels = [int(c) for c in args.concurrency.split(",") if c]
    phase: dict[str, float] = {}
    original = Pipeline.run_phase

    bare: dict = {}  # --bare: answers and judgments as bare posts of captured bodies

    def timed_run_arm(self, *a, **k):
        if bare:
            self._answer, self.judge = bare["answer"], bare["judge"]
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return original(self, *a, **k)
        finally:
            phase["answer"] = time.perf_counter() - start
            phase["cpu"] = time.process_time() - cpu

    Pipeline.run_phase = timed_run_arm
    profiles: list[cProfile.Profile] = []
    original_answer = Pipeline._answer

    def profiled_answer(self, *a, **k):  # runs on the worker thread, where the model calls happen
        if not (args.profile and self.workers == 1):
            return original_answer(self, *a, **k)
        profiler = cProfile.Profile()
        profiler.enable()
        try:
            return original_answer(self, *a, **k)
        finally:
            profiler.disable()
            profiles.append(profiler)

    Pipeline._answer = profiled_answer
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_runner_") as tmp, \
            fake_server("--latency", str(args.latency), "--approx-tokens", "--lifetime", "300",
                        "--dump-dir", str(Path(tmp) / "bodies")) as (url, stats):
        bodies_dir = Path(tmp) / "bodies"
        bodies_dir.mkdir()
        data = make_cases_file(data_path, args.cases, Path(tmp))
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"fake server {url}, latency {1000 * args.latency:.0f} ms; {args.cases} cases from {data_path}; "
              f"{os.cpu_count()} CPUs, load average {load}"
              + f"; judge={args.judge}\n")
        def job(level: int, name: str, *extra: str):
            return compose([
                "dataset=local", f"dataset.path={data}", "arm=full", "model=openai", f"judge={args.judge}",
                f"model.base_url={url}", "model.api_key_env=null", f"model.max_concurrency={level}",
                *([f"judge.max_concurrency={level}"] if args.judge == "llm" else []),
                "cache.enabled=false", f"output_dir={tmp}/{name}", "tracing.langfuse=false", *extra,
            ])

        runner.run(job(2, "warmup", "dataset.limit=2"))  # imports, first connections: not measured
        if args.latency > 0:
            wall, ideal = sdk_baseline(url, args.latency)
            print(f"baseline, the bare openai SDK: 16 threads x 4 small requests in {wall:.2f}s, ideal {ideal:.2f}s "
                  f"(ratio {wall / ideal:.2f}): the server keeps its latency under 16 concurrent requests\n")
        header = (f"{'C':>3}{'calls':>7}{'wall s':>8}{'phase s':>9}{'ideal s':>9}{'wall/ideal':>11}{'phase/ideal':>12}"
                  f"{'bound':>7}{'floor':>7}{'phase/floor':>12}{'call ms':>9}{'CPU/call ms':>13}{'phase CPU/answer':>18}")
        print(header)
        print("-" * len(header))
        for level in levels:
            cfg = job(level, f"job_c{level}")
            for old in bodies_dir.iterdir():
                old.unlink()
            start, cpu = time.perf_counter(), time.process_time()
            metrics = runner.run(cfg)
            cpu = time.process_time() - cpu
            wall = time.perf_counter() - start
            total = metrics["model_calls"].get("total", {})
            calls = int(total.get("calls", 0))
            per_question: dict[tuple, list[int]] = {}
            for line in (Path(tmp) / f"job_c{level}" / "calls.jsonl").read_text().splitlines():
                record = json.loads(line)
                counts = per_question.setdefault((record.get("case_id"), record.get("qid")), [0, 0])
                counts[0 if record.get("kind") == "answer" else 1] += 1
            order = [json.loads(line)["case_id"] for line in
                     (Path(tmp) / f"job_c{level}" / "cases.jsonl").read_text().splitlines()]
            rank = {case_id: i for i, case_id in enumerate(order)}
            units = [tuple(v) for _, v in sorted(per_question.items(), key=lambda kv: (rank.get(kv[0][0], 0), kv[0][1]))]
            ideal = calls * args.latency / level
            bound = schedule_bound(units, level) * args.latency / ideal
            phase_s = phase.get("answer", wall)
            call_ms = 1000 * float(total.get("latency_s", 0.0)) / max(1, calls)
            cpu_ms = 1000 * cpu / max(1, calls)
            answers = int(metrics["model_calls"].get("answer", {}).get("calls", 0))
            phase_cpu_ms = 1000 * phase.get("cpu", cpu) / max(1, answers)
            bodies = [p.read_bytes() for p in sorted(bodies_dir.iterdir())]
            floor = replay_floor(url, bodies, level, args.latency) if args.latency > 0 and bodies else float("nan")
            row = (level, calls, wall, phase_s, ideal, phase_s / ideal, bound, floor, phase_s / ideal / floor,
                   call_ms, cpu_ms, wall / ideal)
            rows.append(row)
            print(f"{level:>3}{calls:>7}{wall:>8.2f}{phase_s:>9.2f}{ideal:>9.2f}{row[11]:>11.2f}{row[5]:>12.2f}"
                  f"{bound:>7.2f}{floor:>7.2f}{row[8]:>12.2f}{call_ms:>9.0f}{cpu_ms:>13.1f}{phase_cpu_ms:>18.1f}")
            if metrics.get("n_errors"):
                print(f"    ({metrics['n_errors']} answer errors)")
        sensitivity = []
        for cpu_ms in (float(x) for x in args.floor_cpu.split(",") if x):
            sensitivity.append((cpu_ms, replay_floor(url, bodies, level, args.latency, cpu_ms)))
            print(f"    floor at C={level} with {cpu_ms:g} ms of client CPU per request: {sensitivity[-1][1]:.2f}")
        if len(sensitivity) >= 2:  # least-squares slope: what one ms of client CPU per call adds to the ratio
            mean_x = sum(x for x, _ in sensitivity) / len(sensitivity)
            mean_y = sum(y for _, y in sensitivity) / len(sensitivity)
            spread = sum((x - mean_x) ** 2 for x, _ in sensitivity)
            slope = sum((x - mean_x) * (y - mean_y) for x, y in sensitivity) / spread if spread else float("nan")
            print(f"    each ms of client CPU per call adds {slope:.3f} to the ratio at C={level} with "
                  f"{1000 * args.latency:.0f} ms replies")
        if args.bare and bodies:
            ratio = bare_run(url, bodies, bare, lambda: runner.run(job(level, f"bare_c{level}")), phase,
                             ideal)
            bare_cpu_ms = 1000 * phase["cpu"] / max(1, answers)
            print(f"    runner at C={level} with bare posts in place of the agent and judge stack: {ratio:.2f}, "
                  f"phase CPU/answer {bare_cpu_ms:.1f} ms: the LangGraph / LangChain / SDK stack takes "
                  f"{phase_cpu_ms - bare_cpu_ms:.1f} of the job's {phase_cpu_ms:.1f} ms")
    Pipeline.run_phase = original
    Pipeline._answer = original_answer
    print(f"\nserver: {stats.get('requests', 0)} chat requests (warm-up and baseline included), peak {stats.get('peak_concurrency', 0)} in flight")
    top = max(rows, key=lambda r: r[0])
    print(f"at C={top[0]}: phase/ideal = {top[5]:.2f} (target <= 1.1), wall/ideal = {top[11]:.2f} with set-up and "
          f"loading; the work units allow {top[6]:.2f} at best ({top[1]} calls on {top[0]} slots), bare threads "
          f"replaying the same requests {top[7]:.2f}; the runner's own overhead (phase/floor) is {top[8]:.2f}x")
    if profiles:
        out = io.StringIO()
        stats_ = pstats.Stats(profiles[0], stream=out)
        for profile in profiles[1:]:
            stats_.add(profile)
        stats_.sort_stats("tottime").print_stats(30)
        stats_.sort_stats("cumulative").print_stats(40)
        print(f"\nprofile of the {len(profiles)} answers at concurrency 1 (worker thread; profiling inflates "
              "pure-Python costs):")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:16000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
