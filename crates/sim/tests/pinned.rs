//! Pinned results: the digests of a few runs that exercise every part of the
//! engine (handovers, handoffs and their notifications, outages, random and
//! bursty loss, schedules, SACK and non-SACK recovery, every algorithm,
//! pacing, many flows, the packet log), and beside each digest a readable
//! snapshot of the run's summary (`Results::summary_text`: per flow, per
//! link direction, per handover) in `tests/snapshots/`, so that a change
//! shows what moved. Optimisations of the engine must leave them
//! bit-identical. A deliberate change of behaviour (a bug fix) updates the
//! pins, with the reason in the commit message: the failure prints the new
//! digest and the snapshot's diff; `INSTA_UPDATE=always cargo test -p
//! wavelab-sim --test integration pinned::` rewrites the snapshots (or `cargo insta review`, if installed),
//! and the new digests go in by hand. Under `CI=true` nothing is written and
//! a mismatch fails.

use crate::common;

use wavelab_sim::Scenario;

fn check(name: &str, text: &str, pinned: u64) {
    let r = common::run(text);
    // the readable form first, so that a failure shows what moved
    insta::assert_snapshot!(name.replace(' ', "_"), r.summary_text());
    let got = r.digest();
    assert_eq!(
        got, pinned,
        "{name}: results changed; digest now {got:#018x} (pinned {pinned:#018x}); the summary is unchanged, so the change is in the time series, the queues or the packet log"
    );
}

/// The DCNET 2016 handover with the speed issue's benchmark timing: the L2
/// bottleneck (8 Mbit/s, 240 ms, 100 packets) switching to L1 after a 2 s
/// outage at 300 s, 360 s simulated.
fn dcnet(cc: &str, log: bool) -> String {
    include_str!("../../../scenarios/dcnet2016-handover.toml")
        .replace("duration = \"90s\"", "duration = \"360s\"")
        .replace(
            "rate = \"2Mbit/s\"\ndelay = \"30ms\"",
            "rate = \"8Mbit/s\"\ndelay = \"240ms\"",
        )
        .replace(
            "handovers = [{ at = \"30s\", outage = \"2s\", rate = \"8Mbit/s\", delay = \"240ms\" }]",
            "handovers = [{ at = \"300s\", outage = \"2s\", rate = \"2Mbit/s\", delay = \"30ms\" }]",
        )
        .replace("cc = \"newreno\"", &format!("cc = \"{cc}\"\nlog_packets = {log}"))
}

#[test]
fn dcnet_handover_scenario_is_the_benchmark_case() {
    let sc = Scenario::from_toml_str(&dcnet("newreno", false)).unwrap();
    assert_eq!(sc.duration.as_secs_f64(), 360.0);
    let l = &sc.links[1];
    assert_eq!(l.rate.as_bps(), 8_000_000);
    assert_eq!(l.handovers.len(), 1);
    assert_eq!(l.handovers[0].rate.unwrap().as_bps(), 2_000_000);
    assert!(!sc.flows[0].log_packets);
}

#[test]
fn dcnet_newreno() {
    check("dcnet newreno", &dcnet("newreno", true), 0x6604ca4bbc904e42);
}

#[test]
fn dcnet_wave() {
    check("dcnet wave", &dcnet("wave", true), 0x493bafb7db88a7a4);
}

#[test]
fn demo() {
    check(
        "demo",
        include_str!("../../../python/wavelab/scenarios/demo.toml"),
        0x8e8f37c0f9ba4848,
    );
}

/// Twenty CUBIC flows with SACK and HyStart++, random loss, staggered starts.
#[test]
fn cubic_flows_with_loss() {
    let text = r#"
        duration = "15s"
        seed = 3
        [[links]]
        between = ["s", "r1"]
        rate = "1Gbit/s"
        delay = "1ms"
        [[links]]
        between = ["r1", "r2"]
        rate = "100Mbit/s"
        delay = "10ms"
        queue = "200pkt"
        loss = { model = "bernoulli", p = 0.0005 }
        [[links]]
        between = ["r2", "d"]
        rate = "1Gbit/s"
        delay = "1ms"
        [[flows]]
        from = "s"
        to = "d"
        cc = { algorithm = "cubic", hystart = true }
        count = 10
        [[flows]]
        from = "s"
        to = "d"
        cc = "cubic"
        start = "3s"
        count = 10
        tcp = { timestamps = true }
    "#;
    check("cubic flows", text, 0x5fa6293f13374a0b);
}

/// BBR and Westwood+ through bursty loss and a schedule of rate and delay
/// changes, with finite transfers and the packet log.
#[test]
fn bbr_westwood_bursty_schedule() {
    let text = r#"
        duration = "30s"
        seed = 9
        [output]
        interval = "50ms"
        [[links]]
        between = ["a", "b"]
        rate = "50Mbit/s"
        delay = "2ms"
        [[links]]
        between = ["b", "c"]
        rate = "20Mbit/s"
        delay = "30ms"
        queue = "150KB"
        loss = { model = "gilbert_elliott", p_good_bad = 0.002, p_bad_good = 0.3, loss_good = 0.0, loss_bad = 0.5 }
        schedule = [
          { at = "10s", rate = "5Mbit/s", delay = "120ms" },
          { at = "20s", direction = "forward", rate = "40Mbit/s" },
        ]
        outages = [{ start = "15s", duration = "1500ms" }]
        [[flows]]
        from = "a"
        to = "c"
        cc = "bbr"
        log_packets = true
        [[flows]]
        from = "a"
        to = "c"
        cc = "westwood"
        start = "2s"
        size = "20MB"
        log_packets = true
        [[flows]]
        from = "a"
        to = "c"
        cc = "reno"
        start = "5s"
        stop = "25s"
        tcp = { sack = false, limited_transmit = true }
    "#;
    check("bbr westwood", text, 0xec2fe86d6c34b7b0);
}

/// Tahoe and Wave without SACK on a chain with a steady-state handover.
#[test]
fn tahoe_wave_steady_handover() {
    let text = r#"
        duration = "60s"
        seed = 5
        [[links]]
        between = ["a", "b"]
        rate = "100Mbit/s"
        delay = "1ms"
        [[links]]
        between = ["b", "c"]
        rate = "6Mbit/s"
        delay = "25ms"
        queue = "60pkt"
        handovers = [{ at = "steady", outage = "1s", rate = "3Mbit/s", delay = "80ms",
                       steady = { fraction = 0.8, latest = "40s" } }]
        [[links]]
        between = ["c", "d"]
        rate = "100Mbit/s"
        delay = "1ms"
        [[flows]]
        from = "a"
        to = "d"
        cc = "tahoe"
        tcp = { sack = false, delayed_ack = false }
        [[flows]]
        from = "a"
        to = "d"
        cc = "wave"
        start = "1s"
        tcp = { sack = false }
        log_packets = true
    "#;
    check("tahoe wave", text, 0x124021c6ebb26b84);
}

/// Two flows through a make-before-break handoff of a multi-homed node from
/// a slow to a fast access link (reordering), notified 6 ms after the
/// switch, then back with a break-before-make handoff and a 1 s
/// disconnection; the packet log on.
#[test]
fn mobiwac_handoffs() {
    let text = include_str!("../../../scenarios/mobiwac-handoff.toml")
        .replace("count = 2\n", "count = 2\nlog_packets = true\n")
        .to_string()
        + r#"
        [[handoffs]]
        node = "mobile"
        at = "15s"
        from = "wlan"
        to = "hsdpa"
        kind = "break-before-make"
        disconnection = "1s"
        notify = { delay = "54ms" }
        "#;
    check("mobiwac handoffs", &text, 0x324cfcd2c3df5577);
}
