//! The standard TCPs as their peers (ns-2, ns-3, Linux) run them: the
//! reproductions of the peer-agreement study, shortened, each asserting the mechanism that
//! was wrong.

use crate::common::run;
use wavelab_sim::Results;

/// The DCNET 2016 scenario on L2 alone (8 Mbit/s, 240 ms one way, 100
/// packets, no handover) for `duration`, algorithm `cc`, 960-byte segments,
/// an initial window of one, delayed ACKs off, and `tcp` (", key = value"
/// pairs, SACK among them) in the flow's TCP table.
fn l2(duration: &str, cc: &str, tcp: &str) -> String {
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
            "tcp = { mss = 960, initial_cwnd = 1, dupthresh = 3, sack = false, partial_ack_timer = \"slow-but-steady\" }",
            &format!("tcp = {{ mss = 960, initial_cwnd = 1, delayed_ack = false{tcp} }}"),
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
    let r = run(&l2("215s", "tahoe", ", sack = false"));
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

/// The smallest RTO - SRTT of flow 0 after `from` seconds.
fn min_rto_margin(r: &Results, from: f64) -> f64 {
    let (t, srtt, rto) = (series(r, "time"), series(r, "srtt"), series(r, "rto"));
    (0..t.len())
        .filter(|&i| t[i] >= from && srtt[i].is_finite())
        .map(|i| rto[i] - srtt[i])
        .fold(f64::INFINITY, f64::min)
}

/// Fix 2: CUBIC with SACK on L2 and `min_rto = 200ms`. RTTVAR took RFC
/// 6298's gain on every ACK, so on this smooth path it decayed to nothing and
/// the RTO sat G = 1 ms above SRTT; with the queue full (RTT 585 ms) a hole's
/// retransmission is acknowledged more than SRTT + 1 ms after the last
/// cumulative ACK, so every fast recovery ended in a spurious timeout (2 in
/// 60 s, 13 and 4 487 needless retransmissions in 330 s). RFC 7323 Appendix
/// G scales the gains by the samples a flight yields, so RTTVAR keeps the
/// path's variation; Linux floors the variation term at `min_rto`.
#[test]
fn the_rto_stays_above_srtt_on_a_smooth_path_with_a_low_min_rto() {
    for (rto, min_margin) in [("rfc6298", 0.002), ("linux", 0.2)] {
        let tcp = format!(", sack = true, min_rto = \"200ms\", rto = \"{rto}\"");
        let r = run(&l2("60s", "cubic", &tcp));
        let timeouts = r.flows.u64s("rto_expiries")[0];
        let spurious = r.flows.u64s("spurious_retransmissions")[0];
        let fr = r.flows.u64s("fast_retransmits")[0];
        let margin = min_rto_margin(&r, 10.0);
        eprintln!(
            "CUBIC, rto = {rto}: {fr} fast retransmits, {timeouts} timeouts, \
             {spurious} spurious retransmissions, RTO - SRTT >= {:.1} ms",
            margin * 1e3
        );
        assert!(fr >= 2, "the run has fast recoveries");
        assert_eq!(timeouts, 0, "rto = {rto}");
        assert_eq!(spurious, 0, "rto = {rto}");
        assert!(margin >= min_margin, "rto = {rto}: margin {margin}");
    }
}

/// Fix 3: BBR with SACK through DCNET's L1 -> L2 handover with a 10 s
/// outage (30-40 s). The first ACK after the outage comes at about 45.5 s
/// (the backed-off timer) and covers only retransmitted data, as does every
/// ACK of the repair. RTprop took only Karn-valid samples, and the PROBE_RTT
/// that the expired estimate started then ended without a sample and
/// re-stamped the old path's 68 ms for another 10 s: BBR ran with cwnd = 2
/// x BtlBw x 68 ms on a 485 ms path, and BtlBw walked down to 0.12 Mbit/s.
/// Now the timestamp echo gives the rate sample its RTT (as Linux's
/// `tcp_ack_update_rtt`), and a PROBE_RTT without a sample leaves the
/// estimate to the next sample.
#[test]
fn bbr_rtprop_takes_the_new_paths_rtt_right_after_a_handover() {
    for timestamps in [true, false] {
        let text = include_str!("../../../scenarios/dcnet2016-handover.toml")
            .replace("duration = \"90s\"", "duration = \"70s\"")
            .replace("cc = \"newreno\"", "cc = \"bbr\"")
            .replace("outage = \"2s\"", "outage = \"10s\"")
            .replace(
                "sack = false",
                &format!("sack = true, timestamps = {timestamps}"),
            );
        let r = run(&text);
        let (t, acked) = (series(&r, "time"), r.series.u64s("bytes_acked"));
        let (rtprop, btl_bw) = (series(&r, "cc_rt_prop"), series(&r, "cc_btl_bw"));
        let after = |i: usize| t[i] > 40.0;
        let first_ack = (1..t.len())
            .find(|&i| after(i) && acked[i] > acked[i - 1])
            .map(|i| t[i])
            .unwrap();
        let new_rtprop = (0..t.len())
            .find(|&i| after(i) && rtprop[i] >= 0.484)
            .map(|i| t[i])
            .unwrap();
        let min_bw = (0..t.len())
            .filter(|&i| after(i))
            .map(|i| btl_bw[i])
            .fold(f64::INFINITY, f64::min);
        eprintln!(
            "timestamps {timestamps}: first ACK after the outage at {first_ack} s, \
             RTprop >= 484 ms from {new_rtprop} s, BtlBw >= {:.2} Mbit/s",
            min_bw / 1e6
        );
        let limit = if timestamps { 0.0 } else { 2.0 };
        assert!(
            new_rtprop <= first_ack + limit,
            "timestamps {timestamps}: RTprop stale until {new_rtprop} s"
        );
        assert!(
            (0..t.len()).all(|i| t[i] < new_rtprop || rtprop[i] >= 0.484),
            "and stays the new path's"
        );
        assert!(min_bw >= 1e6, "BtlBw fell to {min_bw}");
    }
}
