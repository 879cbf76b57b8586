//! The LEO access model ([`wavelab_sim`]'s `leo` link field): a flow over
//! it in both engine modes, its RTT following each interval's base delay,
//! its outages and non-congestive loss counted where they happen, and the
//! errors of a LEO link given a second source of its settings.

use crate::common;

use wavelab_sim::compile::leo_plan;
use wavelab_sim::{Scenario, Simulation};

/// A server behind a 100 Mbit/s, 5 ms core link, then a LEO access link
/// (`leo` is its table); one CUBIC flow with SACK for `secs`.
fn path(leo: &str, secs: u32) -> String {
    format!(
        r#"
        duration = "{secs}s"
        seed = 4
        [[links]]
        name = "core"
        between = ["server", "gateway"]
        rate = "100Mbit/s"
        delay = "5ms"
        [[links]]
        name = "sat"
        between = ["gateway", "dish"]
        queue = "200pkt"
        leo = {leo}
        [[flows]]
        from = "server"
        to = "dish"
        cc = "cubic"
        tcp = {{ sack = true }}
        "#
    )
}

#[test]
fn a_leo_link_runs_the_same_in_both_engine_modes() {
    let (a, b) = common::run_both(&path("{ outage = \"50ms\" }", 40));
    assert_eq!(a.digest(), b.digest());
    assert!(a.flows.u64s("bytes_delivered")[0] > 10_000_000);
}

#[test]
fn the_smallest_rtt_of_each_interval_is_its_path() {
    // no loss and no spike, and a receive window (30 KiB) below the
    // path's smallest bandwidth-delay product (10 Mbit/s x 40 ms = 50 kB):
    // the flow builds no standing queue, and each interval's smallest RTT
    // is twice the core's and the interval's base delay plus the
    // serialisations (1.2 ms for a data packet at 10 Mbit/s), never below
    let leo = "{ downlink_loss = { model = \"none\" }, uplink_loss = { model = \"none\" }, spike = \"0s\" }";
    let text = path(leo, 60).replace("sack = true", "sack = true, rcv_window = \"30KiB\"");
    let sc = Scenario::from_toml_str(&text).unwrap();
    let plan = leo_plan(&sc, 1).unwrap();
    let mut sim = Simulation::new(sc).unwrap();
    sim.run();
    let r = sim.results();
    let time = r.series.f64s("time");
    let rtt = r.series.f64s("rtt");
    for (k, i) in plan.intervals.iter().enumerate() {
        let start = i.start.as_secs_f64() + 1.0; // the samples of packets sent before
        let end = plan
            .intervals
            .get(k + 1)
            .map_or(60.0, |n| n.start.as_secs_f64());
        let smallest = (0..time.len())
            .filter(|&j| time[j] >= start && time[j] < end && rtt[j] > 0.0)
            .map(|j| rtt[j])
            .fold(f64::INFINITY, f64::min);
        let path = 2.0 * (0.005 + i.delay.as_secs_f64());
        assert!(smallest >= path, "interval {k}: {smallest} < {path}");
        assert!(
            smallest < path + 0.010,
            "interval {k}: {smallest} vs {path}"
        );
    }
}

#[test]
fn outages_and_the_non_congestive_loss_are_counted_on_the_link() {
    let r = common::run(&path("{ outage = \"100ms\" }", 60));
    // directions: core forward 0, reverse 1; sat forward (downlink) 2
    let sent = r.links.u64s("sent_packets")[2];
    let random = r.links.u64s("dropped_random")[2];
    let outage = r.links.u64s("dropped_outage")[2];
    // 1 % Bernoulli per packet: the count's standard deviation is about
    // sqrt(sent / 100); four of them either side
    let expected = sent as f64 / 100.0;
    let sd = expected.sqrt();
    assert!(
        (random as f64 - expected).abs() < 4.0 * sd,
        "{random} of {sent}"
    );
    // reconfigurations at 12, 27, 42 and 57 s, each 100 ms dark
    assert!(outage > 0, "no packet lost to the four outages");
}

#[test]
fn a_second_source_of_what_the_model_draws_is_refused_by_name() {
    let cases = [
        (
            path("{}", 10).replace(
                "queue = \"200pkt\"",
                "queue = \"200pkt\"\nloss = { model = \"bernoulli\", p = 0.01 }",
            ),
            "links[1].loss",
        ),
        (
            path("{}", 10).replace(
                "queue = \"200pkt\"",
                "queue = \"200pkt\"\nforward = { delay_trace = \"x.csv\" }",
            ),
            "links[1].forward.delay_trace",
        ),
        (
            path("{ delay = { min = \"40ms\", max = \"20ms\" } }", 10),
            "links[1].leo.delay: min 40ms is above max 20ms",
        ),
        (
            path("{ outage = \"15s\" }", 10),
            "links[1].leo.outage: 15s is not shorter than the period 15s",
        ),
        (
            path("{ uplink = { min = \"0bit/s\", max = \"1Mbit/s\" } }", 10),
            "links[1].leo.uplink.min: must be above zero",
        ),
        (
            path("{ downlink_loss = { model = \"bernoulli\", p = 2.0 } }", 10),
            "links[1].leo.downlink_loss.p: 2.0 is not a probability",
        ),
        (
            path("{ perod = \"15s\" }", 10),
            "links[1].leo.perod: unknown field `perod`",
        ),
    ];
    for (text, expected) in cases {
        let e = Scenario::from_toml_str(&text).unwrap_err().to_string();
        assert!(e.contains(expected), "{e}\nexpected: {expected}");
    }
}

#[test]
fn the_wall_clock_links_run_a_leo_link_too() {
    // what the emulator builds: the same compiled directions, on the
    // clock-free model (drop-tail) or the stepped one (a discipline)
    let sc = Scenario::from_toml_str(&path("{ outage = \"50ms\" }", 30)).unwrap();
    assert_eq!(wavelab_sim::link_models(&sc).unwrap().len(), 4);
    let fq = path("{}", 30).replace(
        "queue = \"200pkt\"",
        "queue = \"200pkt\"\nqdisc = \"fq_codel\"",
    );
    let sc = Scenario::from_toml_str(&fq).unwrap();
    assert_eq!(
        wavelab_sim::compile::wall_clock_links::<()>(&sc)
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn leoreplayer_traces_drive_a_direction() {
    // LeoReplayer's pair: bw_N.txt is Mahimahi's format (here 2 lines a
    // millisecond: 24 Mbit/s), delay_N.txt one delay in ms per 10 ms
    // (here 20 ms for 5 s, then 35 ms)
    let tmp = crate::trace::Temp::new("leoreplayer");
    let bw = tmp.file("bw_1.txt", "1\n1\n");
    let mut delays = "20\n".repeat(500);
    delays.push_str(&"35\n".repeat(500));
    let delay = tmp.file("delay_1.txt", &delays);
    let text = format!(
        r#"
        duration = "10s"
        [[links]]
        between = ["server", "gateway"]
        rate = "1Gbit/s"
        delay = "1ms"
        [[links]]
        between = ["gateway", "dish"]
        rate = "1Mbit/s"
        delay = "1ms"
        queue = "100pkt"
        forward = {{ trace = "{bw}", delay_trace = "{delay}", delay_trace_format = "leoreplayer" }}
        reverse = {{ delay_trace = "{delay}", delay_trace_format = "leoreplayer" }}
        [[flows]]
        from = "server"
        to = "dish"
        cc = "cubic"
        tcp = {{ sack = true, rcv_window = "30KiB" }}
        "#
    );
    let (a, b) = common::run_both(&text);
    assert_eq!(a.digest(), b.digest());
    let time = a.series.f64s("time");
    let rtt = a.series.f64s("rtt");
    let smallest = |from: f64, to: f64| {
        (0..time.len())
            .filter(|&j| time[j] >= from && time[j] < to && rtt[j] > 0.0)
            .map(|j| rtt[j])
            .fold(f64::INFINITY, f64::min)
    };
    // 2 x (1 + 20) ms, then 2 x (1 + 35) ms, plus serialisations (0.5 ms
    // per packet at 24 Mbit/s)
    let (early, late) = (smallest(1.0, 5.0), smallest(6.0, 10.0));
    assert!((0.042..0.046).contains(&early), "{early}");
    assert!((0.072..0.076).contains(&late), "{late}");
    // the same file read as CSV (the default format) is an error naming
    // the field and the line
    let csv = text.replacen(", delay_trace_format = \"leoreplayer\"", "", 1);
    let e = Scenario::from_toml_str(&csv).unwrap_err().to_string();
    assert!(e.contains("delay_trace") && e.contains("line 1"), "{e}");
}
