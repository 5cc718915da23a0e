"""Answering a question about a view: the LangGraph answering agent (``model=...``), the offline
evidence reader (``model=offline``), what a question's request holds, and evidence survival by provenance."""
