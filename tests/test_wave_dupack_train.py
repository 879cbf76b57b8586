"""TCP Wave's ``dupack_train`` option (docs/algorithms/wave-failures.md):
three Wave flows share a 2 Mbit/s hop behind a 50-packet queue, without
loss on the link. With wavelab's default rule a duplicate ACK cuts the
train, so each flow keeps only the dispersion of trains that met an empty
queue (the hop's full rate): all three send at the hop's rate and the queue
overflows. With the Linux module's rule the counted trains measure each
flow's share, and the flows fill the hop."""

from __future__ import annotations

import pytest

import wavelab
from wavelab.results import Results
from wavelab.scenario.loading import from_dict

SECONDS = 20
HOP_BPS = 2e6


def three_waves(dupack_train: str) -> Results:
    tcp = {"mss": 1000, "sack": False, "delayed_ack": False}
    hop = {"rate": "2Mbit/s", "delay": "1ms", "queue": "50pkt"}
    return wavelab.run(
        from_dict(
            {
                "name": f"three-waves-{dupack_train}",
                "duration": f"{SECONDS}s",
                "links": [
                    {"name": "hop", "between": ["a", "r"], **hop},
                    {"name": "wired", "between": ["r", "b"], "rate": "10Mbit/s", "delay": "25ms"},
                ],
                "flows": [
                    {
                        "from": "a",
                        "to": "b",
                        "count": 3,
                        "tcp": tcp,
                        "cc": {"algorithm": "wave", "dupack_train": dupack_train},
                    }
                ],
            }
        )
    )


@pytest.mark.parametrize("rule", ["cut", "count"])
def test_which_trains_set_tx_time_on_a_shared_queue(rule: str) -> None:
    r = three_waves(rule)
    share = float(r.flows["bytes_delivered"].sum()) * 8 / SECONDS / HOP_BPS
    drops = int(r.links["dropped_queue"].sum())
    print(f"{rule}: {share:.0%} of the hop delivered, {drops} packets dropped at the queue")
    if rule == "cut":
        assert share < 0.3, share
        assert drops > 1000, drops
    else:
        assert share > 0.7, share
        assert drops < 500, drops
