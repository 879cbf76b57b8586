//! Queue disciplines under TCP, end to end in the simulator: on a
//! bufferbloated bottleneck (a 1,000-packet buffer) a long-lived CUBIC flow
//! fills a drop-tail queue, while CoDel holds the standing queue near its
//! 5 ms target (Nichols and Jacobson 2012; RFC 8289 section 4.2) and PIE
//! near its 15 ms target (RFC 8033 section 4.1).

use crate::common;

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
/// ECN, marks reach the receiver (all but those marked in the run's last one-way
/// delay, still on the wire at the end), and an algorithm that reduces on a mark
/// (all but BBR and TCP Wave, which do not react, and BBRv3, which lowers its
/// short-term bounds at the end of the round instead of its window at the
/// mark) loses no packet.
#[test]
fn every_algorithm_runs_with_ecn() {
    for cc in wavelab_tcp::cc::ALGORITHMS {
        let r = common::run(&codel_flow(cc, true, "10s", "5ms"));
        let flow = |c: &str| r.flows.u64s(c)[0];
        let (marks, reductions) = (r.links.u64s("marked")[0], flow("ecn_reductions"));
        // CoDel marks at dequeue; a marked packet still needs its 1.2 ms
        // serialisation and the 20 ms propagation, so one marked in the
        // run's last ~21 ms is still on the wire when the run ends
        // (DCTCP keeps a standing queue and was marked at 9.993 s). Every
        // mark made up to 25 ms before the end has reached the receiver.
        let before_end = queue_col(&r, 0, 0.0, "time")
            .iter()
            .filter(|&&t| t <= 10.0 - 0.025)
            .count();
        let early = queue_col(&r, 0, 0.0, "aqm_marks")[before_end - 1] as u64;
        eprintln!(
            "{cc}: marked {marks} ({early} by 9.975 s), ce_received {}, ecn_reductions {reductions}, retransmissions {}",
            flow("ce_received"),
            flow("retransmissions")
        );
        assert!(flow("bytes_delivered") > 0, "{cc}");
        let ce = flow("ce_received");
        assert!(
            early <= ce && ce <= marks,
            "{cc}: marks reach the receiver ({early} <= {ce} <= {marks})"
        );
        if !matches!(*cc, "bbr" | "bbr3" | "wave") {
            assert!(reductions > 0, "{cc} reduces on a mark");
            assert_eq!(flow("retransmissions"), 0, "{cc} loses nothing");
        }
    }
}

/// A shipped scenario's run.
fn shipped(name: &str) -> wavelab_sim::Results {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    common::run(&std::fs::read_to_string(format!("{dir}/{name}.toml")).unwrap())
}

/// The queue series' rows of direction `dir` at or after `from` seconds:
/// the values of column `c`.
fn queue_col(r: &wavelab_sim::Results, dir: u32, from: f64, c: &str) -> Vec<f64> {
    let q = &r.queues;
    let (time, dirs) = (q.f64s("time"), q.col::<u32>("dir"));
    let values: Vec<f64> = match q.column(c) {
        Some(wavelab_model::tables::ColumnData::U64(v)) => v.iter().map(|&x| x as f64).collect(),
        _ => q.f64s(c).to_vec(),
    };
    (0..time.len())
        .filter(|&i| dirs[i] == dir && time[i] >= from)
        .map(|i| values[i])
        .collect()
}

/// The `q` quantile of `v` (nearest rank; 1.0 is the maximum).
fn percentile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// The queue series of CoDel's direction: once slow start's overshoot is
/// drained (after 10 s) the sojourn of the packet last dequeued stays near
/// the 5 ms target (RFC 8289 section 4.4): its 90th percentile within 50 %
/// of it, no sample above twice it (drop-tail's queue on the same link
/// holds 0.88 s); the dropping state and count follow the drops, and the
/// cumulative drops end at the links table's count; the reverse (ACK)
/// direction's discipline never drops.
#[test]
fn the_queue_series_shows_codel_settling_near_its_target() {
    let r = shipped("bufferbloat-codel");
    let sojourn = queue_col(&r, 0, 10.0, "sojourn");
    let (p90, max) = (
        percentile(sojourn.clone(), 0.9),
        percentile(sojourn.clone(), 1.0),
    );
    let dropping = queue_col(&r, 0, 0.0, "codel_dropping");
    let count = queue_col(&r, 0, 0.0, "codel_count");
    let drops = queue_col(&r, 0, 0.0, "aqm_drops");
    eprintln!(
        "codel: sojourn after 10 s: median {:.4} s, p90 {p90:.4} s, max {max:.4} s over {} \
         samples; dropping in {} samples, max count {}, drops {}",
        percentile(sojourn.clone(), 0.5),
        sojourn.len(),
        dropping.iter().filter(|&&d| d == 1.0).count(),
        count.iter().cloned().fold(0.0, f64::max),
        drops.last().unwrap(),
    );
    assert!(
        (0.0025..0.0075).contains(&p90),
        "p90 sojourn near 5 ms ({p90} s)"
    );
    assert!(max < 0.010, "no sojourn above twice the target ({max} s)");
    assert!(dropping.iter().all(|&d| d == 0.0 || d == 1.0));
    assert!(dropping.contains(&1.0), "CoDel entered its dropping state");
    assert!(count.iter().cloned().fold(0.0, f64::max) >= 1.0);
    assert!(
        drops.windows(2).all(|w| w[0] <= w[1]),
        "drops are cumulative"
    );
    assert_eq!(
        *drops.last().unwrap() as u64,
        r.links.u64s("dropped_aqm")[0]
    );
    // no probability on CoDel; nothing but NaN
    assert!(queue_col(&r, 0, 0.0, "drop_prob")
        .iter()
        .all(|p| p.is_nan()));
    assert!(queue_col(&r, 1, 0.0, "aqm_drops").iter().all(|&d| d == 0.0));
}

/// PIE's drop probability in the queue series: high while slow start's
/// overshoot drains, then settled: every 5 s mean from 5 s to 30 s is
/// positive and within an order of magnitude of a single flow's need
/// (1e-4 to 1e-2), and the sojourn's median after 10 s is within 50 % of
/// the 15 ms target (RFC 8033 section 4.1).
#[test]
fn the_queue_series_shows_pies_probability_settling() {
    let r = shipped("bufferbloat-pie");
    let p = queue_col(&r, 0, 0.0, "drop_prob");
    // 10 samples a second; the first 5 s, then the next five windows of 5 s
    let means: Vec<f64> = p[..300]
        .chunks(50)
        .map(|w| w.iter().sum::<f64>() / w.len() as f64)
        .collect();
    let sojourn = percentile(queue_col(&r, 0, 10.0, "sojourn"), 0.5);
    eprintln!(
        "pie: mean drop probability per 5 s {means:.5?}; median sojourn after 10 s {sojourn:.4} s"
    );
    for m in &means[1..] {
        assert!(
            (1e-4..1e-2).contains(m),
            "PIE's probability settled ({means:?})"
        );
    }
    assert!(means[0] > 10.0 * means[5], "higher during the overshoot");
    assert!(
        (0.0075..0.0225).contains(&sojourn),
        "sojourn near 15 ms ({sojourn})"
    );
    assert!(queue_col(&r, 0, 0.0, "codel_dropping")
        .iter()
        .all(|d| d.is_nan()));
    let drops = queue_col(&r, 0, 0.0, "aqm_drops");
    assert_eq!(
        *drops.last().unwrap() as u64,
        r.links.u64s("dropped_aqm")[0]
    );
}

/// With ECN the marks the queue series counts are the marks of the links
/// table and the CE-marked segments the receiver saw.
#[test]
fn the_queue_series_counts_the_marks_the_receiver_saw() {
    let r = shipped("bufferbloat-codel-ecn");
    let marks = queue_col(&r, 0, 0.0, "aqm_marks");
    let (last, links, received) = (
        *marks.last().unwrap() as u64,
        r.links.u64s("marked")[0],
        r.flows.u64s("ce_received")[0],
    );
    eprintln!("ecn: series marks {last}, links marked {links}, ce_received {received}");
    assert!(last > 0);
    assert_eq!(last, links);
    assert_eq!(last, received);
    assert!(queue_col(&r, 0, 0.0, "aqm_drops").iter().all(|&d| d == 0.0));
}

/// DualPI2's columns: p_C and p_CL are coupled in every row, p_C = (p_CL /
/// k)^2 with k = 2 (RFC 9332 section 2.4), and a drop-tail run has only NaN
/// and zeros in the discipline's columns.
#[test]
fn the_queue_series_shows_dualpi2s_coupling() {
    let r = shipped("bufferbloat-dualpi2");
    let p_c = queue_col(&r, 0, 0.0, "drop_prob");
    let p_cl = queue_col(&r, 0, 0.0, "prob_l");
    assert!(p_cl.iter().any(|&p| p > 0.0), "DualPI2's probability rose");
    for (c, l) in p_c.iter().zip(&p_cl) {
        let coupled = (l / 2.0).powi(2);
        assert!(
            (c - coupled).abs() < 1e-9,
            "p_C {c} vs (p_CL / 2)^2 {coupled}"
        );
    }
    let tail = shipped("bufferbloat-drop-tail");
    for c in [
        "sojourn",
        "drop_prob",
        "prob_l",
        "codel_dropping",
        "codel_count",
    ] {
        assert!(
            queue_col(&tail, 0, 0.0, c).iter().all(|v| v.is_nan()),
            "{c}"
        );
    }
    for c in ["aqm_drops", "aqm_marks"] {
        assert!(queue_col(&tail, 0, 0.0, c).iter().all(|&v| v == 0.0), "{c}");
    }
}
