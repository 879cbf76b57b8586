"""TCP Wave's ``rto_samples`` option (docs/algorithms/wave.md): DCNET 2016
feeds every burst's RTT sample to the RTO estimator, retransmission-inflated
ones included; the Linux module's kernel samples every ACK under Karn's rule.
On the shipped handover-grid sweep's L2 -> L1 handover with two Wave flows,
the paper's rule lets a repair's samples drive the RTO to its 60 s ceiling,
so no timeout ever resets Wave; the kernel's rule keeps it at the path's."""

from __future__ import annotations

import pytest

import wavelab
from wavelab.results import Results
from wavelab.sweep import load_sweep


def l2_to_l1_two_waves(rto_samples: str) -> Results:
    base = load_sweep("handover-grid").base
    return wavelab.run(
        base.with_changes(
            {
                "flows[0].cc": {"algorithm": "wave", "rto_samples": rto_samples},
                "flows[0].count": 2,
                "links[1].rate": "8Mbit/s",
                "links[1].delay": "240ms",
                "links[1].handovers[0].rate": "2Mbit/s",
                "links[1].handovers[0].delay": "30ms",
                "links[1].handovers[0].at": "20s",
            }
        )
    )


@pytest.mark.parametrize("rule", ["all", "karn"])
def test_which_samples_set_the_rto(rule: str) -> None:
    r = l2_to_l1_two_waves(rule)
    srtt = float(r.series["srtt"].max())
    goodput = float(r.flows["goodput"].sum()) / 1e6
    print(f"{rule}: largest srtt {srtt:.2f} s, goodput {goodput:.2f} Mbit/s")
    if rule == "all":
        # a train whose first ACK ends a repair samples the whole repair
        assert srtt > 30, srtt
    else:
        # one sample per ACK of new data, none across a retransmission
        assert srtt < 1.0, srtt
        assert goodput > 2 * float(l2_to_l1_two_waves("all").flows["goodput"].sum()) / 1e6
