//! ETCP in the MobiWac 2009 set-up (section 4.1): the mechanisms of the
//! paper's section 3 on whole runs, against regular TCP (TCP with SACK).
//! Server -- router -- base stations on 100 Mbit/s / 2 ms links, two access
//! links to the mobile node with a router buffer of max(BDP, 5) packets,
//! 1500-byte packets, one bulk flow (ns-2's settings of the study: an ACK per
//! segment, a 200 ms minimum RTO, an initial window of 3), the handoff at 5 s
//! notified to the sender as `wavelab reproduce mobiwac2009` does.

use crate::common;

use wavelab_sim::{Results, Scenario, Simulation};
use wavelab_tcp::SenderStats;

/// The topology with access links `old` and `new` (kbit/s, one-way ms,
/// buffer in packets), `cc` on one flow, and a handoff at 5 s given by
/// `handoff` (the fields after `to`).
fn mobiwac(cc: &str, old: (u64, u64, u64), new: (u64, u64, u64), handoff: &str) -> String {
    mobiwac_rwnd(cc, old, new, handoff, "64MiB")
}

/// [`mobiwac`] with the receiver's window `rwnd`.
fn mobiwac_rwnd(
    cc: &str,
    old: (u64, u64, u64),
    new: (u64, u64, u64),
    handoff: &str,
    rwnd: &str,
) -> String {
    let links = common::mobiwac_links((old.0, old.1), (new.0, new.1), Some((old.2, new.2)));
    format!(
        r#"
        duration = "9s"
        {links}
        [[flows]]
        from = "server"
        to = "mobile"
        cc = "{cc}"
        log_packets = true
        tcp = {{ mss = 1460, initial_cwnd = 3, min_rto = "200ms", delayed_ack = false, rcv_window = "{rwnd}" }}
        [[handoffs]]
        node = "mobile"
        at = "5s"
        from = "old"
        to = "new"
        {handoff}
        "#
    )
}

/// Runs to the handoff and then to `until` seconds: the sender's counters
/// at the handoff, and the results.
fn run(text: &str, until: f64) -> (SenderStats, Results) {
    let sc = Scenario::from_toml_str(text).unwrap();
    let mut sim = Simulation::new(sc).unwrap();
    sim.run_until(wavelab_tcp::Instant::from_nanos(5_000_000_000));
    let before = sim.sender(0).stats().clone();
    sim.run_until(wavelab_tcp::Instant::from_nanos((until * 1e9) as u64));
    (before, sim.results())
}

fn after(before: &SenderStats, r: &Results, column: &str) -> u64 {
    let now = r.flows.u64s(column)[0];
    let then = match column {
        "fast_retransmits" => before.fast_retransmits,
        "spurious_retransmissions" => before.spurious_retransmissions,
        "retransmissions" => before.retransmissions,
        "rto_expiries" => before.rto_expiries,
        _ => unreachable!("{column}"),
    };
    now - then
}

/// The packet log's rows of one event kind from `t0` on: (time, seq).
fn rows(r: &Results, event: &str, t0: f64) -> Vec<(f64, u64)> {
    let t = r.packets.f64s("time");
    let seq = r.packets.u64s("seq");
    let ev = r.packets.labels("event");
    (0..t.len())
        .filter(|&i| ev[i] == event && t[i] >= t0)
        .map(|i| (t[i], seq[i]))
        .collect()
}

const MBB_NOTIFIED: &str = "kind = \"make-before-break\"\nnotify = { delay = \"0s\" }";
/// HSDPA (2 Mbit/s, 50 ms; BDP 17 packets) and WLAN (54 Mbit/s, 2 ms; BDP
/// 18): the paper's Figure 13.
const HSDPA: (u64, u64, u64) = (2_000, 50, 17);
const WLAN: (u64, u64, u64) = (54_000, 2, 18);

/// Counters of the half second after the handoff (the old link's queue and
/// path drain within 0.2 s: it holds the reordering and nothing else):
/// fast retransmits, retransmissions, spurious retransmissions.
fn reordering_counts(cc: &str, rwnd: &str) -> (u64, u64, u64) {
    let (b, r) = run(&mobiwac_rwnd(cc, HSDPA, WLAN, MBB_NOTIFIED, rwnd), 5.5);
    (
        after(&b, &r, "fast_retransmits"),
        after(&b, &r, "retransmissions"),
        after(&b, &r, "spurious_retransmissions"),
    )
}

/// Section 3.4 / Figure 3, make-before-break from HSDPA to WLAN: the
/// segments sent on the new link overtake those still on the old one.
/// Regular TCP takes the duplicate ACKs for a loss: a fast retransmit, its
/// retransmissions found unnecessary by DSACK. ETCPv1, told of a link 27
/// times faster, raises dupthresh to 27: no fast recovery, only the one
/// retransmission of the first unacknowledged segment that Figure 3 keeps.
/// The receiver's window is ns-2's default (`window_` = 20 packets), which
/// bounds how far the new link's segments can run ahead of the hole.
#[test]
fn make_before_break_slow_to_fast_regular_tcp_retransmits_falsely_and_etcpv1_does_not() {
    let rwnd = "29200B";
    let (reg_fr, reg_rtx, reg_spur) = reordering_counts("newreno", rwnd);
    let (fr, rtx, spur) = reordering_counts("etcpv1", rwnd);
    eprintln!(
        "rwnd 20 packets: regular {reg_fr} fast retransmits, {reg_rtx} retransmissions \
         ({reg_spur} spurious); ETCPv1 {fr}, {rtx} ({spur})"
    );
    assert!(reg_fr >= 1, "regular TCP: a false fast retransmit");
    assert!(reg_spur >= 1, "regular TCP: DSACK shows it unnecessary");
    assert_eq!(fr, 0, "ETCPv1: no fast recovery from the reordering");
    assert!(rtx <= 1, "ETCPv1: {rtx} retransmissions");
    assert!(rtx < reg_rtx);
}

/// The same handoff without a receiver limit: the window before the
/// handoff is 35 segments, 17 of them queued at the old link, which
/// delivers one every 6 ms, while the new link returns one every 0.2 ms.
/// More than 27 segments are SACKed above the hole before the old link
/// drains, so ETCPv1's sender reaches the raised dupthresh and returns to
/// normal fast recovery as Figure 3 says it must; the reordering is deeper
/// than the bandwidth ratio, and ETCPv1 retransmits about as much as
/// regular TCP (this is why our Figure 13 differs from the paper's, see
/// docs/experiments/mobiwac2009.md).
#[test]
fn a_reordering_deeper_than_the_bandwidth_ratio_returns_etcpv1_to_normal_fast_recovery() {
    let (reg_fr, reg_rtx, _) = reordering_counts("newreno", "64MiB");
    let (fr, rtx, spur) = reordering_counts("etcpv1", "64MiB");
    eprintln!("no rwnd limit: regular {reg_fr} fast retransmits, {reg_rtx} retransmissions; ETCPv1 {fr}, {rtx} ({spur} spurious)");
    assert_eq!(fr, 1, "the sender's own fast retransmit at dupthresh 27");
    assert!(spur >= 10, "{spur} unnecessary retransmissions");
    assert!(reg_fr >= 1);
}

/// Section 3.3 / Figure 2, break-before-make from WLAN (54 Mbit/s, 2 ms) to
/// HSDPA (2 Mbit/s, 50 ms) with a 1 s disconnection, the paper's Figure 9:
/// the timer expires during the disconnection and backs off. The notice
/// arrives when the new link is up (1 s + its 50 ms + the 4 ms wired path).
/// ETCPv1, in RTO recovery, retransmits the first unacknowledged segment at
/// that instant; regular TCP sends nothing until its backed-off timer
/// expires, later.
#[test]
fn break_before_make_fast_to_slow_etcpv1_retransmits_at_the_notification() {
    let old = (54_000, 2, 9);
    let new = (2_000, 50, 17);
    let hand =
        "kind = \"break-before-make\"\ndisconnection = \"1s\"\nnotify = { delay = \"1.054s\" }";
    let notice = 6.054;
    let (b, regular) = run(&mobiwac("newreno", old, new, hand), 9.0);
    let (b1, etcp) = run(&mobiwac("etcpv1", old, new, hand), 9.0);
    assert!(
        after(&b, &regular, "rto_expiries") >= 2,
        "the timer backed off"
    );
    assert!(
        after(&b1, &etcp, "rto_expiries") >= 2,
        "the timer backed off"
    );
    let first = |r: &Results| {
        rows(r, "retransmit", notice - 1e-9)
            .first()
            .copied()
            .expect("a retransmission after the notice")
    };
    let (t_etcp, seq_etcp) = first(&etcp);
    let (t_reg, seq_reg) = first(&regular);
    eprintln!("first retransmission after the notice: ETCPv1 {t_etcp:.4} s, regular {t_reg:.4} s");
    assert!(
        (t_etcp - notice).abs() < 1e-6,
        "ETCPv1 at the notification: {t_etcp}"
    );
    assert!(
        t_reg > notice + 0.05,
        "regular TCP waits for the timer: {t_reg}"
    );
    // both repair the same segment: the first unacknowledged one
    assert_eq!(seq_etcp, seq_reg);
    // nothing was sent by regular TCP between the notice and its timer
    let sent = |r: &Results, k: &str| {
        rows(r, k, notice - 1e-9)
            .iter()
            .filter(|x| x.0 < t_reg)
            .count()
    };
    assert_eq!(sent(&regular, "send") + sent(&regular, "retransmit"), 0);
}
