//! DCTCP (RFC 8257) over the step-marking queue it assumes, and TCP
//! Prague's L4S response through DualPI2 beside a classic flow.

use crate::common;

/// One DCTCP flow over a 100 Mbit/s bottleneck with a 10 ms base RTT
/// (83 packets in flight fill it) behind RED in step mode with threshold
/// `k` packets.
fn step_flow(k: u32, duration: &str) -> String {
    format!(
        r#"
        duration = "{duration}"
        [output]
        interval = "5ms"
        [[links]]
        between = ["s", "r"]
        rate = "100Mbit/s"
        delay = "5ms"
        queue = "1000pkt"
        qdisc = {{ discipline = "red", step = true, min_th = {k} }}
        [[flows]]
        from = "s"
        to = "r"
        cc = "dctcp"
        tcp = {{ sack = true, ecn = true }}
        "#
    )
}

/// Column `c` of the rows at or after `from` seconds (the data direction's
/// rows of the queue series).
fn after(t: &wavelab_model::tables::Table, from: f64, c: &str) -> Vec<f64> {
    let time = t.f64s("time");
    let dir = t.get::<u32>("dir");
    let values: Vec<f64> = match t.column(c) {
        Some(wavelab_model::tables::ColumnData::U64(v)) => v.iter().map(|&x| x as f64).collect(),
        _ => t.f64s(c).to_vec(),
    };
    (0..time.len())
        .filter(|&i| time[i] >= from && dir.is_none_or(|d| d[i] == 0))
        .map(|i| values[i])
        .collect()
}

/// RFC 8257 section 3.1's premise and section 3.3's control law together:
/// behind a step at K = 20 packets DCTCP keeps the instantaneous queue
/// near K (marks cut the window by alpha / 2, a little, so the queue dips
/// only a few packets below K), fills the link and loses nothing; and
/// alpha, the moving average of each window's marked fraction with gain
/// 1/16 (section 3.3), converges to the fraction of data packets the
/// queue marked.
#[test]
fn dctcp_holds_the_queue_near_k_on_a_step_and_alpha_tracks_the_marked_fraction() {
    let r = common::run(&step_flow(20, "5s"));
    let flow = |c: &str| r.flows.u64s(c)[0];
    assert_eq!(flow("retransmissions"), 0, "no loss");
    assert!(flow("ecn_reductions") > 20);
    // the queue after slow start's overshoot (the data direction)
    let dirs = r.queues.col::<u32>("dir");
    let (time, packets) = (r.queues.f64s("time"), r.queues.col::<u64>("packets"));
    let mut q: Vec<u64> = (0..time.len())
        .filter(|&i| dirs[i] == 0 && time[i] >= 1.0)
        .map(|i| packets[i])
        .collect();
    q.sort_unstable();
    let (p5, p50, max) = (q[q.len() / 20], q[q.len() / 2], q[q.len() - 1]);
    // goodput over the same span, against the payload rate of full
    // 1500-byte packets at 100 Mbit/s (1460 payload bytes)
    let delivered = after(&r.series, 1.0, "bytes_delivered");
    let seconds = after(&r.series, 1.0, "time");
    let goodput = (delivered[delivered.len() - 1] - delivered[0]) * 8.0
        / (seconds[seconds.len() - 1] - seconds[0]);
    let payload_rate = 100e6 * 1460.0 / 1500.0;
    // alpha against the queue's marked fraction from 2 s on
    let marks = after(&r.queues, 2.0, "aqm_marks");
    let sent = after(&r.series, 2.0, "bytes_sent");
    let fraction = (marks[marks.len() - 1] - marks[0]) * 1460.0 / (sent[sent.len() - 1] - sent[0]);
    let alpha = after(&r.series, 2.0, "cc_alpha");
    let alpha_mean = alpha.iter().sum::<f64>() / alpha.len() as f64;
    eprintln!(
        "queue p5 {p5} p50 {p50} max {max} packets; goodput {:.2} Mbit/s of {:.2}; \
         marked fraction {fraction:.4}, alpha mean {alpha_mean:.4} (min {:.4}, max {:.4})",
        goodput / 1e6,
        payload_rate / 1e6,
        alpha.iter().cloned().fold(f64::MAX, f64::min),
        alpha.iter().cloned().fold(0.0, f64::max),
    );
    assert!((15..=20).contains(&p5), "p5 {p5}");
    assert!((18..=22).contains(&p50), "median {p50}");
    assert!(max <= 25, "max {max}");
    assert!(goodput > 0.97 * payload_rate, "goodput {goodput}");
    assert!(
        (alpha_mean - fraction).abs() < 0.2 * fraction,
        "alpha {alpha_mean} vs marked fraction {fraction}"
    );
}

/// Prague's scalable response (ECT(1), the alpha / 2 cut) in DualPI2's L
/// queue beside a CUBIC flow with classic ECN in its C queue, one 40 ms
/// path (the shipped scenario prague-dualpi2). RFC 9332 section 2.1
/// couples the L queue's marking to the classic one as p_L = k sqrt(p_C'),
/// k = 2, which for equal RTTs makes a scalable flow's rate (about 2 / p_L
/// segments per RTT) and a classic one's (about 1.22 / sqrt(p_C) for Reno,
/// CUBIC near it at this BDP) the same order: we ask for rates within a
/// factor of two of each other, a bound the uncoupled queues (Prague
/// would see only its own shallow step) would break. Prague's packets see
/// the L queue's millisecond-scale delay (its RTT median within 8 ms of
/// the 40 ms base) while CUBIC's sit behind the classic queue's 15 ms
/// target; neither loses a packet, as both respond to marks.
#[test]
fn prague_in_the_l_queue_shares_with_cubic_in_the_classic_queue() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let r = common::run(&std::fs::read_to_string(format!("{dir}/prague-dualpi2.toml")).unwrap());
    let (goodput, rtt) = (r.flows.f64s("goodput"), r.flows.f64s("rtt_p50"));
    let retransmissions = r.flows.u64s("retransmissions");
    eprintln!(
        "prague {:.2} Mbit/s, rtt p50 {:.1} ms; cubic {:.2} Mbit/s, rtt p50 {:.1} ms; retransmissions {retransmissions:?}",
        goodput[0] / 1e6,
        rtt[0] * 1e3,
        goodput[1] / 1e6,
        rtt[1] * 1e3
    );
    assert_eq!(retransmissions, &[0, 0]);
    let ratio = goodput[0] / goodput[1];
    assert!((0.5..=2.0).contains(&ratio), "prague / cubic rate {ratio}");
    assert!(goodput[0] + goodput[1] > 9.0e6, "the link is used");
    assert!(rtt[0] < 0.048, "prague's rtt median {}", rtt[0]);
    assert!(
        rtt[1] > rtt[0] + 0.01,
        "cubic queues behind the classic target"
    );
}

/// A loss is not a mark: DCTCP and Prague halve on it as Reno does (RFC
/// 8257 section 3.5) and retransmit. With the step queue's `ecn` off it
/// drops where it marked (DCTCP still negotiates ECN, as it needs it), and
/// DCTCP repairs every drop by fast retransmit.
#[test]
fn without_ecn_dctcp_falls_back_to_loss_and_recovers() {
    let scenario = step_flow(20, "5s").replace("step = true", "step = true, ecn = false");
    let r = common::run(&scenario);
    let flow = |c: &str| r.flows.u64s(c)[0];
    eprintln!(
        "retransmissions {}, fast retransmits {}, ce {}, delivered {}",
        flow("retransmissions"),
        flow("fast_retransmits"),
        flow("ce_received"),
        flow("bytes_delivered")
    );
    assert_eq!(flow("ce_received"), 0);
    assert!(
        flow("fast_retransmits") > 0,
        "drops repaired by fast retransmit"
    );
    assert!(flow("bytes_delivered") > 40_000_000, "the flow keeps going");
}
