//! Queue disciplines under TCP, end to end in the simulator: on a
//! bufferbloated bottleneck (a 1,000-packet buffer) a long-lived CUBIC flow
//! fills a drop-tail queue, while CoDel holds the standing queue near its
//! 5 ms target (Nichols and Jacobson 2012; RFC 8289 section 4.2) and PIE
//! near its 15 ms target (RFC 8033 section 4.1).

mod common;

/// One `rate` bottleneck with a 20 ms one-way delay and a 1,000-packet
/// buffer running `qdisc` on both directions; one CUBIC flow for 30 s.
fn bloated(rate: &str, qdisc: &str) -> String {
    format!(
        r#"
        duration = "30s"
        [[links]]
        between = ["s", "r"]
        rate = "{rate}"
        delay = "20ms"
        queue = "1000pkt"
        qdisc = "{qdisc}"
        [[flows]]
        from = "s"
        to = "r"
        cc = "cubic"
        "#
    )
}

/// The data direction's mean queueing delay (s), its AQM drops, and the
/// flow's goodput as a fraction of the link rate.
fn run(rate: &str, bps: f64, qdisc: &str) -> (f64, u64, f64) {
    let r = common::run(&bloated(rate, qdisc));
    let delay = r.links.f64s("queue_delay_mean")[0];
    let aqm = r.links.u64s("dropped_aqm")[0];
    let delivered = *r.flows.u64s("bytes_delivered").first().unwrap() as f64;
    (delay, aqm, delivered * 8.0 / 30.0 / bps)
}

#[test]
fn codel_holds_its_target_where_drop_tail_bloats() {
    for (rate, bps) in [("10Mbit/s", 10e6), ("100Mbit/s", 100e6)] {
        let (tail, tail_aqm, _) = run(rate, bps, "drop_tail");
        let (codel, codel_aqm, util) = run(rate, bps, "codel");
        eprintln!("{rate}: drop-tail {tail:.4} s, codel {codel:.4} s, {codel_aqm} AQM drops, utilisation {util:.3}");
        assert_eq!(tail_aqm, 0, "{rate}: drop-tail drops no packet by AQM");
        assert!(tail > 0.05, "{rate}: drop-tail's queue bloats ({tail} s)");
        assert!(codel_aqm > 0, "{rate}: CoDel drops");
        // the mean includes slow start's overshoot before the first
        // dropping episode; the standing queue sits near 5 ms
        assert!(codel < 0.015, "{rate}: CoDel's queue near 5 ms ({codel} s)");
        assert!(util > 0.8, "{rate}: CoDel keeps the link busy ({util})");
    }
}

#[test]
fn pie_holds_its_target() {
    let (pie, aqm, util) = run("10Mbit/s", 10e6, "pie");
    eprintln!("pie {pie:.4} s, {aqm} AQM drops, utilisation {util:.3}");
    assert!(aqm > 0, "PIE drops");
    assert!(
        (0.005..0.03).contains(&pie),
        "PIE's queue near its 15 ms target ({pie} s)"
    );
    assert!(util > 0.8, "PIE keeps the link busy ({util})");
}

#[test]
fn shipped_bufferbloat_scenarios_hold_their_queues() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let mut delays = Vec::new();
    for q in ["drop-tail", "codel", "fq-codel", "pie", "red", "dualpi2"] {
        let text = std::fs::read_to_string(format!("{dir}/bufferbloat-{q}.toml")).unwrap();
        let r = common::run(&text);
        let delay = r.links.f64s("queue_delay_mean")[0];
        eprintln!("bufferbloat-{q}: queue_delay_mean {delay:.4} s");
        delays.push(delay);
    }
    // every discipline keeps the queue far below drop-tail's
    for (q, d) in ["codel", "fq-codel", "pie", "red", "dualpi2"]
        .iter()
        .zip(&delays[1..])
    {
        assert!(
            *d < delays[0] / 5.0,
            "{q}: {d} s against drop-tail's {} s",
            delays[0]
        );
    }
}
