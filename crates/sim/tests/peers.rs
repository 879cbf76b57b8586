//! The standard TCPs as their peers (ns-2, ns-3, Linux) run them: the
//! reproductions of issue 22, shortened, each asserting the mechanism that
//! was wrong.

mod common;

use common::run;
use wavelab_sim::Results;

/// The DCNET 2016 scenario on L2 alone (8 Mbit/s, 240 ms one way, 100
/// packets, no handover) for `duration`, algorithm `cc`, delayed ACKs off,
/// with `flow_tcp` (", key = value" pairs) added to the flow's TCP table.
fn l2(duration: &str, cc: &str, flow_tcp: &str) -> String {
    include_str!("../../../scenarios/dcnet2016-handover.toml")
        .replace("duration = \"90s\"", &format!("duration = \"{duration}\""))
        .replace(
            "rate = \"2Mbit/s\"\ndelay = \"30ms\"",
            "rate = \"8Mbit/s\"\ndelay = \"240ms\"",
        )
        .replace(
            "handovers = [{ at = \"30s\", outage = \"2s\", rate = \"8Mbit/s\", delay = \"240ms\" }]",
            "",
        )
        .replace("cc = \"newreno\"", &format!("cc = \"{cc}\""))
        .replace(
            "partial_ack_timer = \"slow-but-steady\" }",
            &format!("partial_ack_timer = \"slow-but-steady\", delayed_ack = false{flow_tcp} }}"),
        )
}

/// Flow 0's series column `name`.
fn series(r: &Results, name: &str) -> Vec<f64> {
    r.series.f64s(name).to_vec()
}

/// Fix 1: Tahoe's go-back-N after a fast retransmit resends segments the
/// receiver already holds; their duplicate ACKs sit at the recovery point
/// and must not start another fast retransmit (RFC 6582 section 3.2 step 1,
/// ns-2's `highest_ack_ > recover_`). With the bug, every Tahoe run on L2
/// reached ssthresh = 2 segments without a timeout and stayed there
/// (cwnd 3, goodput near zero) from the third loss event (199 s) on.
#[test]
fn tahoe_never_falls_to_the_minimum_ssthresh_without_a_timeout() {
    let r = run(&l2("215s", "tahoe", ""));
    let fr = r.flows.u64s("fast_retransmits")[0];
    let rto = r.flows.u64s("rto_expiries")[0];
    let ssthresh = series(&r, "ssthresh");
    let min_ssthresh = ssthresh
        .iter()
        .filter(|x| x.is_finite())
        .fold(f64::INFINITY, |a, &b| a.min(b));
    eprintln!(
        "Tahoe on L2: {fr} fast retransmits, {rto} timeouts, smallest ssthresh {min_ssthresh} B"
    );
    assert_eq!(rto, 0);
    assert!(
        min_ssthresh > 100.0 * 960.0,
        "ssthresh fell to {min_ssthresh} B: fast retransmits on ACKs at the recovery point"
    );
    assert!(fr <= 4, "{fr} fast retransmits");
}
