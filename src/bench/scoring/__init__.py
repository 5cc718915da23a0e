"""Scoring answers: the judges (exact, LLM), the judge panel, hedges, and the job metrics computed from
the stored records (their intervals come from :mod:`bench.stats`)."""
