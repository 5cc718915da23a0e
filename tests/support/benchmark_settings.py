"""The tiny setting of every script in benchmarks/: one to three cases, one pass (its test runs each
with it; the documented-commands test checks that every benchmark the docs show has one)."""

TINY = {
    "bench_views.py": ["--repeat", "1", "--cases", "2"],
    "bench_startup.py": ["--runs", "1", "--sweep-runs", "1"],
    "bench_memory.py": ["--cases", "3,15"],
    "bench_cost.py": ["--cases", "1", "--seeds", "0", "--prompts", "sre", "--mechanisms", "shipped"],
    "bench_runner.py": ["--cases", "2", "--concurrency", "2", "--latency", "0.01", "--bare"],
    "bench_throughput.py": ["--cases", "2", "--configs", "4", "--latency", "0.01"],
    "bench_coverage.py": ["--reps", "50", "--ks", "10", "--draws", "100"],
    "bench_power.py": [],  # three designs x two offline jobs: about 30 s
    "bench_flags.py": ["--sources", "sample", "--prompts", "sre"],
    "bench_monotone.py": ["--sources", "sample,shell"],
    "bench_references.py": ["--sources", "sample,shell"],
    "bench_case_building.py": ["--sizes", "200,400"],
    "bench_questions.py": [],
    "bench_summary_budget.py": ["--sources", "sample", "--prompts", "sre"],
    "bench_windows.py": [],
    "bench_peers.py": ["--datasets", "sample", "--limit", "2"],
    "bench_budgets.py": ["--datasets", "sample", "--limit", "2", "--budgets", "0.25"],
    "bench_prefix_cache.py": ["--cases", "2", "--latency", "0.01", "--concurrency", "4", "--repeats", "1"],
    "bench_shared_cache.py": ["--limit", "2", "--latency", "0.01", "--repeat", "1"],
    "bench_inspect.py": ["--cases", "2", "--repeats", "1", "--latencies", "0.01", "--concurrency", "4"],
}
