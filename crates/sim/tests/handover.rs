//! Vertical handovers (DCNET 2016's break-before-make model): at T the link
//! drops everything in both directions for HT, and its rate and delay switch
//! to the new link's at T.

use crate::common::run;
use wavelab_sim::Results;

/// A 2 Mbit/s / 30 ms bottleneck (L1) switching to 8 Mbit/s / 240 ms (L2).
fn l1_to_l2(at: &str, extra: &str) -> String {
    format!(
        r#"
        duration = "45s"
        [[links]]
        between = ["s", "r1"]
        rate = "100Mbit/s"
        delay = "1ms"
        [[links]]
        name = "bottleneck"
        between = ["r1", "r2"]
        rate = "2Mbit/s"
        delay = "30ms"
        queue = "100pkt"
        handovers = [{{ at = {at}, outage = "2s", rate = "8Mbit/s", delay = "240ms" {extra} }}]
        [[links]]
        between = ["r2", "d"]
        rate = "100Mbit/s"
        delay = "1ms"
        [[flows]]
        from = "s"
        to = "d"
        log_packets = true
        tcp = {{ mss = 960, sack = false }}
        "#
    )
}

fn events(r: &Results) -> (Vec<f64>, Vec<String>, Vec<String>, Vec<i64>) {
    let t = r.packets.f64s("time").to_vec();
    let cat = |name: &str| {
        let v: Vec<String> = r
            .packets
            .labels(name)
            .iter()
            .map(|s| s.to_string())
            .collect();
        v
    };
    let link = r.packets.col::<i64>("link").to_vec();
    (t, cat("event"), cat("cause"), link)
}

#[test]
fn outage_covers_both_directions_only_during_the_handover_time() {
    let r = run(&l1_to_l2("\"30s\"", ""));
    let (t, ev, cause, link) = events(&r);
    let inside = |x: f64| (30.0..32.0).contains(&x);
    // nothing crosses the bottleneck during [T, T + HT)
    let crossing = (0..t.len()).filter(|&i| inside(t[i]) && (ev[i] == "deliver" || ev[i] == "ack"));
    assert_eq!(crossing.count(), 0);
    // both directions of the bottleneck (directions 2 and 3) drop on the outage
    let outage_drops = |dir: i64| {
        (0..t.len())
            .filter(|&i| ev[i] == "drop" && cause[i] == "outage" && link[i] == dir)
            .count()
    };
    assert!(
        outage_drops(2) > 0 && outage_drops(3) > 0,
        "{} {}",
        outage_drops(2),
        outage_drops(3)
    );
    // every outage drop falls inside the window or belongs to a packet that was
    // on the link at its start (arriving at most one old one-way delay plus one
    // serialisation later than T + HT would be impossible: the window ends it)
    for i in 0..t.len() {
        if cause[i] == "outage" {
            assert!((30.0..=32.0).contains(&t[i]), "outage drop at {}", t[i]);
        }
    }
    // traffic resumes after the outage and the new link's delay is in effect
    let delivered_after = (0..t.len())
        .filter(|&i| t[i] > 32.0 && ev[i] == "deliver")
        .count();
    assert!(delivered_after > 100);
    assert_eq!(r.links.u64s("rate")[2], 8_000_000);
    assert!((r.links.f64s("delay")[3] - 0.240).abs() < 1e-12);
    let ho = r.handovers.f64s("time");
    assert_eq!(ho, &[30.0]);
}

#[test]
fn packets_queued_at_the_switch_drain_at_the_new_rate_and_are_lost() {
    let r = run(&l1_to_l2("\"30s\"", ""));
    // the bottleneck queue just before the switch
    let q_time = r.queues.f64s("time");
    let q_dir = r.queues.col::<u32>("dir");
    let q_pkts = r.queues.u64s("packets");
    let i = (0..q_time.len())
        .find(|&i| (q_time[i] - 29.9).abs() < 1e-9 && q_dir[i] == 2)
        .unwrap();
    let queued = q_pkts[i];
    assert!(queued > 10, "a standing queue at the handover: {queued}");
    let (t, ev, cause, link) = events(&r);
    let drops: Vec<f64> = (0..t.len())
        .filter(|&k| ev[k] == "drop" && cause[k] == "outage" && link[k] == 2)
        .map(|k| t[k])
        .collect();
    // each is dropped when it would arrive: after serialisation at 8 Mbit/s
    // (1 ms per 1000-byte packet) and 240 ms of propagation
    assert!(
        drops.len() as u64 >= queued,
        "{} drops for {queued} queued",
        drops.len()
    );
    let first = drops.iter().cloned().fold(f64::MAX, f64::min);
    assert!(
        (30.0..30.03).contains(&first),
        "the packet on the wire dies first: {first}"
    );
    let queued_last = drops
        .iter()
        .filter(|&&x| x >= 30.24 && x < 30.24 + queued as f64 * 0.001 + 0.002)
        .count() as u64;
    assert!(
        queued_last + 2 >= queued,
        "{queued_last} of {queued} drained at the new rate"
    );
}

#[test]
fn steady_handover_waits_for_the_flow_to_fill_the_old_link() {
    let r = run(&l1_to_l2(
        "\"steady\"",
        r#", steady = { window = "5s", fraction = 0.9, earliest = "10s" }"#,
    ));
    let when = r.handovers.f64s("time")[0];
    // NewReno fills 2 Mbit/s within a few seconds: the rule fires at its
    // earliest time or soon after, never before
    assert!((10.0..20.0).contains(&when), "handover at {when}");
    let series_t = r.series.f64s("time");
    let d = r.series.u64s("bytes_delivered");
    let at = |x: f64| d[series_t.iter().position(|&y| (y - x).abs() < 1e-9).unwrap()] as f64;
    let goodput = (at(when) - at(when - 5.0)) * 8.0 / 5.0;
    let capacity = 2e6 * 960.0 / 1000.0;
    assert!(goodput >= 0.9 * capacity, "{goodput} at the handover");
    assert!(
        (at(when - 0.1) - at(when - 5.1)) * 8.0 / 5.0 < 0.9 * capacity || when <= 10.0 + 1e-9,
        "the first sample that satisfied the rule"
    );
    // a rule not met by `latest` (here: a 60 s window cannot hold 90 % of
    // the capacity before 54 s) falls back to `latest`
    let r = run(&l1_to_l2(
        "\"steady\"",
        r#", steady = { window = "60s", earliest = "10s", latest = "25s" }"#,
    ));
    assert_eq!(r.handovers.f64s("time"), &[25.0]);
}
