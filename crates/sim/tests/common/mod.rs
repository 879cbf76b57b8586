//! Helpers shared by the system tests (no file uses all of them, hence the
//! `dead_code` allowance).
#![allow(dead_code)]

use wavelab_sim::{Results, Scenario, Simulation};

/// Runs a scenario file's text to the end.
pub fn run(toml_text: &str) -> Results {
    let sc = Scenario::from_toml_str(toml_text).unwrap();
    let mut sim = Simulation::new(sc).unwrap();
    sim.run();
    sim.results()
}

/// Runs a scenario file's text to the end in both engine modes: virtual
/// time, then reference.
pub fn run_both(toml_text: &str) -> (Results, Results) {
    let sc = Scenario::from_toml_str(toml_text).unwrap();
    let mut fast = Simulation::new(sc.clone()).unwrap();
    fast.run();
    let mut slow = Simulation::new_reference(sc).unwrap();
    slow.run();
    (fast.results(), slow.results())
}

/// The `flow` column of the time series.
pub fn flows_col(r: &Results) -> &[u32] {
    r.series.col("flow")
}

/// Payload bytes flow `flow` had delivered at time `t` (from the series).
pub fn delivered_at(r: &Results, flow: u32, t: f64) -> u64 {
    let time = r.series.f64s("time");
    let flows = flows_col(r);
    let d = r.series.u64s("bytes_delivered");
    (0..time.len())
        .find(|&i| flows[i] == flow && (time[i] - t).abs() < 1e-9)
        .map(|i| d[i])
        .unwrap_or_else(|| panic!("no sample for flow {flow} at {t}"))
}

/// Jain's fairness index.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

/// The standard dumbbell of `scenarios/`, 60 s: a 10 Mbit/s, 50 ms
/// bottleneck (buffer `queue`) between 100 Mbit/s, 1 ms links; RTT 104 ms,
/// BDP 130 kB = 87 packets of 1500 bytes. `flows` is appended as is.
pub fn dumbbell(queue: &str, flows: &str) -> String {
    format!(
        r#"
        duration = "60s"
        [[links]]
        name = "access"
        between = ["sender", "r1"]
        rate = "100Mbit/s"
        delay = "1ms"
        [[links]]
        name = "bottleneck"
        between = ["r1", "r2"]
        rate = "10Mbit/s"
        delay = "50ms"
        queue = "{queue}"
        [[links]]
        name = "egress"
        between = ["r2", "receiver"]
        rate = "100Mbit/s"
        delay = "1ms"
        {flows}
        "#
    )
}

/// MobiWac 2009's links (section 4.1): server -- router -- base stations on
/// 100 Mbit/s / 2 ms links (`wired`, `bs1-wire`, `bs2-wire`), and the
/// access links `old` (bs1 -- mobile) and `new` (bs2 -- mobile) of `(rate
/// in kbit/s, one-way delay in ms)`, with buffers of `queues` packets (else
/// the default). Link directions 6 and 7 are `old`'s, 8 and 9 `new`'s.
pub fn mobiwac_links(old: (u64, u64), new: (u64, u64), queues: Option<(u64, u64)>) -> String {
    let queue = |q: Option<u64>| q.map_or(String::new(), |q| format!("queue = \"{q}pkt\""));
    format!(
        r#"
        [[links]]
        name = "wired"
        between = ["server", "router"]
        rate = "100Mbit/s"
        delay = "2ms"
        [[links]]
        name = "bs1-wire"
        between = ["router", "bs1"]
        rate = "100Mbit/s"
        delay = "2ms"
        [[links]]
        name = "bs2-wire"
        between = ["router", "bs2"]
        rate = "100Mbit/s"
        delay = "2ms"
        [[links]]
        name = "old"
        between = ["bs1", "mobile"]
        rate = "{}kbit/s"
        delay = "{}ms"
        {}
        [[links]]
        name = "new"
        between = ["bs2", "mobile"]
        rate = "{}kbit/s"
        delay = "{}ms"
        {}
        "#,
        old.0,
        old.1,
        queue(queues.map(|q| q.0)),
        new.0,
        new.1,
        queue(queues.map(|q| q.1)),
    )
}

/// Bytes queued at the dumbbell's bottleneck (its forward direction, link
/// table row 2), one value per queue sample with `from <= time <= to`.
pub fn bottleneck_queue(r: &Results, from: f64, to: f64) -> Vec<f64> {
    let time = r.queues.f64s("time");
    let dir = r.queues.col::<u32>("dir");
    let bytes = r.queues.u64s("bytes");
    (0..time.len())
        .filter(|&i| dir[i] == 2 && time[i] >= from - 1e-9 && time[i] <= to + 1e-9)
        .map(|i| bytes[i] as f64)
        .collect()
}

/// The arithmetic mean.
pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}
