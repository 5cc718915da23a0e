"""The tau2-bench profile: customer-support and operations runs (telecom, airline, retail).

Domain tools only (``get_customer_by_phone``, ``run_speed_test``, ``refuel_data`` ...): no
shell, no editor. Results are JSON records or one-line readouts; a refused action returns
``Error: ...``. ``done`` ends a solo run and ``transfer_to_human_agents`` hands the customer
over: both end the episode. No harness markers.
"""

from __future__ import annotations

from bench.profiles.base import Profile

__all__ = ["TAU2"]

TAU2 = Profile(
    name="tau2",
    finish_tools=("done", "transfer_to_human_agents"),
    think_tools=("think",),
    error_result=r"error\b\s*:",
)
