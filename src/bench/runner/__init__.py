"""One job of the benchmark: ``run(cfg)`` (what ``python -m bench.main`` calls; tests call it directly).

- :mod:`bench.runner.job`: the job from its config to its metrics (set-up, cases, phases, status);
- :mod:`bench.runner.pipeline`: views, answers and judgments as tasks, records in order;
- :mod:`bench.runner.resume`: continuing a job in its directory;
- :mod:`bench.runner.setup`: building the components, their fail-fast checks;
- :mod:`bench.runner.provenance`: what ``run.json`` records.

    metrics = run(cfg)
"""

from bench.runner.job import job_dir, run
from bench.runner.resume import ResumeError

__all__ = ["run", "job_dir", "ResumeError"]
