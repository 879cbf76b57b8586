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

/// The shipped ECN scenario: CoDel marks where bufferbloat-codel drops, the
/// queue stays as short, and the flow loses nothing.
#[test]
fn the_shipped_ecn_scenario_marks_instead_of_dropping() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let run = |name: &str| {
        let text = std::fs::read_to_string(format!("{dir}/{name}.toml")).unwrap();
        common::run(&text)
    };
    let (drops, ecn) = (run("bufferbloat-codel"), run("bufferbloat-codel-ecn"));
    let col = |r: &wavelab_sim::Results, t: &str, c: &str| match t {
        "links" => r.links.u64s(c)[0],
        _ => r.flows.u64s(c)[0],
    };
    for (what, r) in [("drops", &drops), ("ecn", &ecn)] {
        eprintln!(
            "{what}: queue_delay_mean {:.4} s, marked {}, dropped_aqm {}, dropped_queue {}, \
             retransmissions {}, ecn_reductions {}, goodput {:.2} Mbit/s",
            r.links.f64s("queue_delay_mean")[0],
            col(r, "links", "marked"),
            col(r, "links", "dropped_aqm"),
            col(r, "links", "dropped_queue"),
            col(r, "flows", "retransmissions"),
            col(r, "flows", "ecn_reductions"),
            r.flows.f64s("goodput")[0] / 1e6,
        );
    }
    assert_eq!(col(&drops, "links", "marked"), 0);
    assert!(col(&drops, "links", "dropped_aqm") > 0);
    assert!(col(&ecn, "links", "marked") > 0);
    assert_eq!(
        col(&ecn, "links", "dropped_aqm") + col(&ecn, "links", "dropped_queue"),
        0
    );
    assert_eq!(col(&ecn, "flows", "retransmissions"), 0);
    assert!(col(&ecn, "flows", "ecn_reductions") > 0);
    let delay = ecn.links.f64s("queue_delay_mean")[0];
    assert!(
        delay < 0.015,
        "CoDel's queue near 5 ms with ECN too ({delay} s)"
    );
}

/// A 10 Mbit/s, 20 ms link with a 1,000-packet buffer running CoDel, and
/// one `cc` flow with SACK and `ecn`, for `duration`, the series sampled
/// every `interval`.
fn codel_flow(cc: &str, ecn: bool, duration: &str, interval: &str) -> String {
    format!(
        r#"
        duration = "{duration}"
        [output]
        interval = "{interval}"
        [[links]]
        between = ["s", "r"]
        rate = "10Mbit/s"
        delay = "20ms"
        queue = "1000pkt"
        qdisc = "codel"
        [[flows]]
        from = "s"
        to = "r"
        cc = "{cc}"
        tcp = {{ sack = true, ecn = {ecn} }}
        "#
    )
}

/// Classic ECN end to end (RFC 3168 sections 5 and 6.1): a NewReno flow
/// that negotiated ECN behind CoDel, which marks its ECT(0) data instead
/// of dropping it. Every reduction halves the window (ssthresh = FlightSize
/// / 2, cwnd = ssthresh), reductions are at least a round trip apart, and
/// no packet is lost or retransmitted; without ECN the same run drops and
/// retransmits.
#[test]
fn classic_ecn_halves_cwnd_once_per_rtt_under_codel_and_loses_no_packet() {
    let scenario = |ecn: bool| codel_flow("newreno", ecn, "30s", "1ms");
    let plain = common::run(&scenario(false));
    assert!(
        plain.links.u64s("dropped_aqm")[0] > 0,
        "CoDel drops without ECN"
    );
    assert!(plain.flows.u64s("retransmissions")[0] > 0);
    assert_eq!(plain.flows.u64s("ecn_reductions")[0], 0);

    let r = common::run(&scenario(true));
    let (marks, aqm, queue) = (
        r.links.u64s("marked")[0],
        r.links.u64s("dropped_aqm")[0],
        r.links.u64s("dropped_queue")[0],
    );
    let flow = |c: &str| r.flows.u64s(c)[0];
    let reductions = flow("ecn_reductions");
    eprintln!(
        "marks {marks}, CE received {}, ECE ACKs {}, reductions {reductions}, \
         drops {aqm} + {queue}, retransmissions {}",
        flow("ce_received"),
        flow("ecn_echoes"),
        flow("retransmissions")
    );
    assert!(marks > 0, "CoDel marks ECT packets");
    assert_eq!(aqm + queue, 0, "no packet dropped");
    assert_eq!(flow("retransmissions"), 0, "no packet lost");
    assert_eq!(
        flow("ce_received"),
        marks,
        "every mark reaches the receiver"
    );
    assert!(reductions > 0 && reductions <= marks);

    // each reduction in the series (cwnd comes down: nothing else lowers
    // it without a loss) halves the window, with ssthresh = cwnd
    let time = r.series.f64s("time");
    let cwnd = r.series.f64s("cwnd");
    let ssthresh = r.series.f64s("ssthresh");
    let min_rtt = r.flows.f64s("min_rtt")[0];
    let mut seen = Vec::new();
    for i in 1..time.len() {
        if cwnd[i] >= cwnd[i - 1] {
            continue;
        }
        let ratio = cwnd[i] / cwnd[i - 1];
        assert!(
            (0.45..=0.55).contains(&ratio),
            "at {:.3} s cwnd {} -> {} ({ratio:.3})",
            time[i],
            cwnd[i - 1],
            cwnd[i]
        );
        assert_eq!(ssthresh[i], cwnd[i], "at {:.3} s", time[i]);
        seen.push(time[i]);
    }
    assert_eq!(seen.len() as u64, reductions, "one sample per reduction");
    let closest = seen
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::MAX, f64::min);
    eprintln!("closest reductions {closest:.4} s apart, min RTT {min_rtt:.4} s");
    assert!(closest >= min_rtt, "at most one reduction per round trip");
}

/// Every built-in algorithm with ECN behind CoDel: the connection agrees on
/// ECN, marks reach the receiver, and an algorithm that reduces on a mark
/// (all but BBR and TCP Wave, which do not react) loses no packet.
#[test]
fn every_algorithm_runs_with_ecn() {
    for cc in wavelab_tcp::cc::ALGORITHMS {
        let r = common::run(&codel_flow(cc, true, "10s", "100ms"));
        let flow = |c: &str| r.flows.u64s(c)[0];
        let (marks, reductions) = (r.links.u64s("marked")[0], flow("ecn_reductions"));
        eprintln!(
            "{cc}: marked {marks}, ce_received {}, ecn_reductions {reductions}, retransmissions {}",
            flow("ce_received"),
            flow("retransmissions")
        );
        assert!(flow("bytes_delivered") > 0, "{cc}");
        assert_eq!(flow("ce_received"), marks, "{cc}: marks reach the receiver");
        if !matches!(*cc, "bbr" | "wave") {
            assert!(reductions > 0, "{cc} reduces on a mark");
            assert_eq!(flow("retransmissions"), 0, "{cc} loses nothing");
        }
    }
}
