//! TCP Wave on the TCP Wave project page's experiments (the shipped scenario
//! files scenarios/wave-page-single.toml and scenarios/wave-page-fairness.toml).

use crate::common::{flows_col, run};
use wavelab_sim::Results;

/// (time, value) of column `col` for flow `flow`.
fn column(r: &Results, flow: u32, col: &str) -> Vec<(f64, f64)> {
    let time = r.series.f64s("time");
    let flows = flows_col(r);
    let values = r.series.numbers(col);
    (0..time.len())
        .filter(|&i| flows[i] == flow)
        .map(|i| (time[i], values[i]))
        .collect()
}

/// Goodput of `flow` in bit/s between `a` and `b` seconds (sample instants).
fn goodput(r: &Results, flow: u32, a: f64, b: f64) -> f64 {
    let d = column(r, flow, "bytes_delivered");
    let at = |t: f64| {
        d.iter()
            .find(|(x, _)| (x - t).abs() < 1e-9)
            .unwrap_or_else(|| panic!("no sample at {t}"))
            .1
    };
    (at(b) - at(a)) * 8.0 / (b - a)
}

fn percentile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() - 1) as f64 * q).round() as usize]
}

#[test]
fn single_wave_flow_fills_6_mbit_with_bounded_rtt() {
    let r = run(include_str!("../../../scenarios/wave-page-single.toml"));
    let g = goodput(&r, 0, 5.0, 60.0);
    eprintln!(
        "goodput after 5 s: {:.3} Mbit/s ({:.1} % of 6 Mbit/s)",
        g / 1e6,
        g / 6e4
    );
    assert!(g >= 0.85 * 6e6, "goodput {g}");
    // RTT samples after 5 s: the page says the RTT oscillates between the
    // propagation delay and that delay plus the ACK-train dispersion.
    let rtts: Vec<f64> = column(&r, 0, "rtt")
        .into_iter()
        .filter(|&(t, v)| t > 5.0 && v.is_finite())
        .map(|(_, v)| v)
        .collect();
    let propagation = 2.0 * (0.001 + 0.025);
    let burst_time = 10.0 * 1500.0 * 8.0 / 6e6;
    let p95 = percentile(rtts.clone(), 0.95);
    let min = percentile(rtts, 0.0);
    eprintln!(
        "RTT after 5 s: min {:.1} ms, p95 {:.1} ms, bound {:.1} ms",
        min * 1e3,
        p95 * 1e3,
        (propagation + 2.0 * burst_time) * 1e3
    );
    assert!(p95 < propagation + 2.0 * burst_time, "p95 {p95}");
    // the minimum is the propagation delay plus the serialisation of the two
    // segments a delayed ACK waits for (2 x 2 ms at 6 Mbit/s)
    assert!(
        min < propagation + 0.005,
        "the RTT returns to the propagation delay"
    );
    // the timer really drove the flow: TxTime moved away from TxTime0
    let tx: Vec<f64> = column(&r, 0, "cc_tx_time")
        .into_iter()
        .map(|x| x.1)
        .collect();
    assert!(
        tx.iter().skip(20).all(|&x| x < 0.1),
        "TxTime stays near the dispersion"
    );
}

#[test]
fn two_wave_flows_share_and_the_first_regains_the_link() {
    let r = run(include_str!("../../../scenarios/wave-page-fairness.toml"));
    let (a, b) = (goodput(&r, 0, 100.0, 200.0), goodput(&r, 1, 100.0, 200.0));
    let jain = (a + b).powi(2) / (2.0 * (a * a + b * b));
    eprintln!(
        "100-200 s: {:.3} and {:.3} Mbit/s, Jain {jain:.4}",
        a / 1e6,
        b / 1e6
    );
    assert!(jain >= 0.95, "Jain {jain}");
    // after 200 s: the first 1-s window in which connection 1 delivers at least
    // 85 % of the link must end by 210 s, and it must stay there
    let link = 10e6;
    let back = (0..100)
        .map(|k| 200.0 + k as f64 / 10.0)
        .find(|&t| goodput(&r, 0, t, t + 1.0) >= 0.85 * link)
        .expect("connection 1 regains 85 % of the link");
    let after = goodput(&r, 0, back + 1.0, 240.0);
    eprintln!(
        "connection 1 at >= 85 % from {back:.1} s; {:.3} Mbit/s until 240 s",
        after / 1e6
    );
    assert!(back + 1.0 <= 210.0, "regained only at {back}");
    assert!(after >= 0.85 * link, "{after}");
}

/// Regression: with SACK, a fast-retransmission opportunity that the
/// scoreboard filled with new data (nothing was deemed lost) was never used
/// up, so Wave's gate stayed open and the sender emitted 46,000 segments in
/// one instant (as many as the receive window allowed), all but a few
/// dropped at the queue. Wave must stay paced by its bursts with SACK on a
/// lossy link: no queue drop at all here, and most of the link used.
#[test]
fn wave_with_sack_stays_paced_on_a_lossy_link() {
    let r = run(r#"
        duration = "30s"
        [[links]]
        between = ["s", "r"]
        rate = "10Mbit/s"
        delay = "20ms"
        queue = "100pkt"
        loss = { model = "bernoulli", p = 0.01 }
        [[flows]]
        from = "s"
        to = "r"
        cc = "wave"
        tcp = { sack = true }
    "#);
    let queue_drops = r.links.u64s("dropped_queue")[0];
    let sent = r.flows.u64s("segments_sent")[0];
    let g = goodput(&r, 0, 5.0, 30.0);
    println!("sent {sent}, queue drops {queue_drops}, goodput {g:.0} bit/s");
    // 10 Mbit/s of 1500-byte packets is 833 packets/s: 25,000 in 30 s
    assert!(sent < 25_000, "{sent} segments sent");
    assert_eq!(queue_drops, 0);
    assert!(g > 6e6, "goodput {g}");
}
