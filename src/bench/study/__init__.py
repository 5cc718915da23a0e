"""The study over many jobs: reading job directories, tables, plots, the HTML report.

- :mod:`bench.study.jobs`: job directories -> :class:`Job` (records, config, status, label);
- :mod:`bench.study.tables`: pandas frames per job, config, type, question; CSV;
- :mod:`bench.study.figure_text`: a figure as text; :mod:`bench.study.text_tables`: the tables as cells;
- :mod:`bench.study.markdown`: the markdown report and the notes it shares with the HTML page;
- :mod:`bench.study.plots`: SVG plots; :mod:`bench.study.html`: the self-contained page;
- :mod:`bench.study.assemble`: ``write_report`` and the ``python -m bench.report`` command.
"""

from bench.study.jobs import Job, find_job_dirs, flatten, job_config, load_job, load_jobs

__all__ = ["Job", "find_job_dirs", "flatten", "job_config", "load_job", "load_jobs"]
