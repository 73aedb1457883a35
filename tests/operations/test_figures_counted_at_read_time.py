"""The escalation figures a digest or a brief shows are counted when it is read, in one named window.

On main before this change, a read within one window of the last intake showed the state saved by
that intake: its rate ("4873 events in the 10 min window to 22:13" while the sector lines, counted at
read time, added to about 1,715), and its mode ("degraded since 22:16:05; 0 events in the last 10
minutes"). Now the state is assessed at the reader's clock from the stored one (nothing is stored),
so the rate, the sector lines and the mode agree.
"""

from __future__ import annotations

import re
from datetime import timedelta

from mission_memory.api import Memory
from mission_memory.operations.escalation_state import current_state, window_rates
from tests.operations.event_factory import T0, burst


def test_a_read_within_a_window_of_the_intake_counts_its_own_window() -> None:
    with Memory.open(event_mission="ops") as memory:
        # 30 events over ten minutes, one every 20 s, the newest at T0: degraded at intake, rate 30
        state = memory.record_events(burst(30, T0, spread=timedelta(minutes=10)), now=T0, embed=False).escalation
        assert (state.mode.value, state.rate) == ("degraded", 30)
        held = T0 + timedelta(minutes=8)  # 6 events left in the window: the flood holds (ends below 5)
        read = current_state(memory.store, "ops", held)
        counted = window_rates(memory.store, "ops", held, read.window).total
        assert (read.mode.value, read.rate, read.since) == ("degraded", counted, state.since), read
        assert counted == 6
        digest = memory.query("relay heartbeat", scope="all", filters={"mission": "ops"}, token_budget=3000, now=held)
        assert f"rate {counted} events per 10 min window" in digest.text, digest.text
        timeline = re.search(r"Escalation: degraded since .* · (\d+) events in the 10 min window to", digest.text)
        assert timeline is not None and int(timeline.group(1)) == counted, digest.text
        over = T0 + timedelta(minutes=9, seconds=30)  # 1 event left: the flood is over at this clock
        assert current_state(memory.store, "ops", over).mode.value == "normal"
        quiet = memory.query("relay heartbeat", scope="all", filters={"mission": "ops"}, token_budget=3000, now=over)
        assert "Mode: degraded" not in quiet.text, quiet.text
