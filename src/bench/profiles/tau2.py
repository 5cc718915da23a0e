"""The tau2-bench profile: customer-support and operations runs (telecom, airline, retail).

Domain tools only (``get_customer_by_phone``, ``run_speed_test``, ``refuel_data`` ...): no
shell, no editor. Results are JSON records or one-line readouts; a refused action returns
``Error: ...``. ``done`` ends a solo run and ``transfer_to_human_agents`` hands the customer
over: both end the episode. No harness markers. State-changing tools (``write_actions``) are
named by their verb: ``book_``/``cancel_``/``update_``/``toggle_``/``refuel_`` ... (airline,
retail, telecom).
"""

from __future__ import annotations

from bench.profiles.profile import Profile

__all__ = ["TAU2"]

TAU2 = Profile(
    name="tau2",
    finish_tools=("done", "transfer_to_human_agents"),
    think_tools=("think",),
    error_result=r"error\b\s*:",
    write_tools=(r"(?:book|cancel|update|modify|exchange|return|send|refuel|resume|suspend|enable|disable|toggle|"
                 r"reseat|set|reset|reboot|grant|revoke|disconnect|connect|change|add|remove|apply)_\w+"),
)
