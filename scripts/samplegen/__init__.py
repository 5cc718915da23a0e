"""The generator of the shipped sample ``src/bench/samples/sample.jsonl`` and its README.

Every row is a SYNTHETIC OpenHands-style trajectory written for this project: not a real
agent run, no real repository (all repositories are fictional ``acme/*``). Rows use the
column schema of the Hugging Face dataset ``nebius/SWE-rebench-openhands-trajectories``
plus ``synthetic`` (always true) and ``notes``. Each row exercises one part of the case
conversion and reference extraction (SPEC 1.2, 1.3) and declares its expected outcome.

- ``trajectory``: the DSL rows are written in (messages, calls, exchanges, call ids, shell and
  editor observations, the in-memory ``Repo`` that applies edits); ``tests/support/builders.py`` uses it too
- ``openhands``: OpenHands' tool schemas, prompts and think / task_tracker / finish calls
- ``runners``: test-runner output lines; ``expected``: what a row is expected to become
- ``rows/row_NNN.py``: one module per row; ``rows.ROWS``: their order in the file
- ``readme``: the README from the expectations; ``check``: the expectations read back through bench
- ``cli``: ``python scripts/make_sample.py [--check] [--no-datasets]``

Not part of the ``bench`` wheel: a development tool, run from a checkout.
"""
