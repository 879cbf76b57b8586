//! UDP flows: what their senders send (constant bit rate, on/off, trace,
//! voice, video) and what the receiver measures (one-way delay, jitter,
//! loss, late loss past a playout deadline) on paths whose delays and
//! drops are known.

use crate::common;
use std::io::Write;
use wavelab_sim::{Results, Scenario, Simulation};

/// One link `s`-`r` with `link` settings, one flow with `flow` settings,
/// for `secs` seconds.
fn one_link(secs: u32, link: &str, flow: &str) -> String {
    format!(
        r#"
        duration = "{secs}s"
        [[links]]
        between = ["s", "r"]
        {link}
        [[flows]]
        from = "s"
        to = "r"
        transport = "udp"
        {flow}
        "#
    )
}

fn count(r: &Results, flow: usize, name: &str) -> u64 {
    r.flows.options::<u64>(name)[flow].unwrap()
}

fn secs(r: &Results, flow: usize, name: &str) -> f64 {
    r.flows.options::<f64>(name)[flow].unwrap()
}

#[test]
fn cbr_on_an_idle_link_receives_every_packet_after_propagation_and_serialisation() {
    let r = common::run(&one_link(
        10,
        "rate = \"10Mbit/s\"\ndelay = \"20ms\"",
        "stop = \"9s\"\nudp = { pattern = \"cbr\", rate = \"1Mbit/s\", packet = \"1000B\" }",
    ));
    // a packet every 8 ms from 0 to before 9 s
    assert_eq!(count(&r, 0, "packets_sent"), 1125);
    assert_eq!(count(&r, 0, "packets_received"), 1125);
    assert_eq!(count(&r, 0, "packets_lost"), 0);
    // 1,028 B on the wire (20 B IPv4 + 8 B UDP headers)
    assert_eq!(count(&r, 0, "wire_bytes_sent"), 1125 * 1028);
    assert_eq!(count(&r, 0, "bytes_sent"), 1125 * 1000);
    assert_eq!(count(&r, 0, "bytes_delivered"), 1125 * 1000);
    let owd = 0.020 + 1028.0 * 8.0 / 10e6;
    assert!(
        (secs(&r, 0, "owd_mean") - owd).abs() < 1e-9,
        "{}",
        secs(&r, 0, "owd_mean")
    );
    for q in ["owd_p50", "owd_p99"] {
        assert!((secs(&r, 0, q) - owd).abs() <= owd / 128.0, "{q}");
    }
    assert_eq!(secs(&r, 0, "jitter"), 0.0);
    assert_eq!(r.flows.labels("algorithm")[0], "udp-cbr");
    // no deadline: no late count
    assert_eq!(r.flows.options::<u64>("packets_late")[0], None);
    // over its 9 s of sending, 1 Mbit/s of payload
    assert!(
        (secs(&r, 0, "goodput") - 1e6).abs() < 1e3,
        "{}",
        secs(&r, 0, "goodput")
    );
}

#[test]
fn cbr_loss_on_a_lossy_link_follows_the_loss_process() {
    let r = common::run(&one_link(
        21,
        "rate = \"100Mbit/s\"\ndelay = \"10ms\"\nloss = { model = \"bernoulli\", p = 0.05 }",
        "stop = \"20s\"\nudp = { pattern = \"cbr\", rate = \"8Mbit/s\", packet = \"1000B\" }",
    ));
    let sent = count(&r, 0, "packets_sent");
    let lost = count(&r, 0, "packets_lost");
    assert_eq!(sent, 20_000);
    assert_eq!(lost + count(&r, 0, "packets_received"), sent);
    // 5 %, within about 3 standard deviations (0.15 % each)
    let share = lost as f64 / sent as f64;
    assert!((share - 0.05).abs() < 0.005, "lost {share}");
    assert_eq!(lost, r.links.u64s("dropped_random")[0]);
}

#[test]
fn jitter_is_zero_on_a_constant_path_and_positive_across_a_delay_change() {
    let flow = "udp = { pattern = \"voice\" }";
    let constant = common::run(&one_link(10, "rate = \"10Mbit/s\"\ndelay = \"30ms\"", flow));
    assert_eq!(secs(&constant, 0, "jitter"), 0.0);
    let stepped = common::run(&one_link(
        10,
        "rate = \"10Mbit/s\"\ndelay = \"30ms\"\nschedule = [{ at = \"9s\", delay = \"80ms\" }]",
        flow,
    ));
    // one transit change of 50 ms raises J by 50/16 ms; the 20 ms-spaced
    // packets at the new delay then decay it by 15/16 each (RFC 3550
    // section 6.4.1)
    let j = secs(&stepped, 0, "jitter");
    assert!(j > 0.0 && j <= 0.050 / 16.0 + 1e-12, "{j}");
    assert_eq!(stepped.flows.labels("algorithm")[0], "udp-voice");
}

#[test]
fn late_loss_counts_exactly_the_packets_past_the_deadline() {
    // the delay is 300 ms for packets whose serialisation ends in [5 s, 7 s)
    // and 20 ms otherwise; an outage in [2 s, 3 s) drops what it meets
    let r = common::run(&one_link(
        10,
        "rate = \"100Mbit/s\"\ndelay = \"20ms\"\n\
         schedule = [{ at = \"5s\", delay = \"300ms\" }, { at = \"7s\", delay = \"20ms\" }]\n\
         outages = [{ start = \"2s\", duration = \"1s\" }]",
        "stop = \"9s\"\nudp = { pattern = \"voice\", playout_deadline = \"150ms\" }",
    ));
    assert_eq!(count(&r, 0, "packets_sent"), 450);
    // packets 250..349 (sent at 5.00 s to 6.98 s) arrive 300 ms late, and
    // the link keeps its order: the packets sent from 7.00 s wait behind the
    // last of them (7.28 s), those sent before 7.13 s more than 150 ms
    assert_eq!(count(&r, 0, "packets_late"), 100 + 7);
    // the outage destroys the packets on the link during it: those sent at
    // 1.98 s (20 ms in the air) to 2.98 s, packets 99..149; lost, not late
    assert_eq!(count(&r, 0, "packets_lost"), 51);
    assert_eq!(count(&r, 0, "packets_received"), 450 - 51);
}

/// A 20 s run of the flow `flow` (its lines after `[[flows]]`) over an
/// 8 Mbit/s, 20 ms bottleneck with a 100-packet queue, alone or beside a
/// bulk CUBIC flow.
fn beside_bulk(flow: &str, bulk: bool) -> Results {
    let mut s = format!(
        r#"
        duration = "20s"
        [[links]]
        between = ["s", "r"]
        rate = "8Mbit/s"
        delay = "20ms"
        queue = "100pkt"
        [[flows]]
        from = "s"
        to = "r"
        {flow}
        "#
    );
    if bulk {
        s.push_str("[[flows]]\nfrom = \"s\"\nto = \"r\"\ncc = \"cubic\"\n");
    }
    common::run(&s)
}

/// The voice flow's OWD p95 alone, and beside a bulk CUBIC flow.
#[test]
fn bulk_tcp_beside_a_voice_flow_raises_its_delay_by_the_queue() {
    let voice = "transport = \"udp\"\nudp = { pattern = \"voice\", playout_deadline = \"100ms\" }";
    let scenario = |bulk: bool| beside_bulk(voice, bulk);
    let alone = scenario(false);
    let loaded = scenario(true);
    let base = secs(&alone, 0, "owd_p95");
    assert!(base < 0.021, "{base}");
    // a full queue of 100 packets of 1,500 B waits 150 ms at 8 Mbit/s
    let queue = 100.0 * 1500.0 * 8.0 / 8e6;
    let rise = secs(&loaded, 0, "owd_p95") - base;
    assert!(rise > 0.5 * queue && rise < 1.05 * queue, "rise {rise}");
    assert_eq!(count(&alone, 0, "packets_late"), 0);
    assert!(count(&loaded, 0, "packets_late") > 0);
}

#[test]
fn on_off_with_fixed_periods_carries_the_packet_time_as_ns3() {
    // off [0, 1 s), on [1 s, 2 s), ...: 10 ms packets; the first on period
    // sends at 1.01 .. 1.99 s (99) and carries 10 ms, so each later one
    // sends at its start and every 10 ms (100)
    let r = common::run(&one_link(
        20,
        "rate = \"100Mbit/s\"\ndelay = \"5ms\"",
        "udp = { pattern = \"onoff\", rate = \"800kbit/s\", packet = \"1000B\", on = \"1s\", off = \"1s\", distribution = \"fixed\" }",
    ));
    assert_eq!(count(&r, 0, "packets_sent"), 99 + 9 * 100);
    assert_eq!(r.flows.labels("algorithm")[0], "udp-onoff");
}

#[test]
fn on_off_with_exponential_periods_sends_half_the_time_and_follows_the_seed() {
    let run = |seed: u32| {
        let mut sc = one_link(
            100,
            "rate = \"100Mbit/s\"\ndelay = \"5ms\"",
            "udp = { pattern = \"onoff\", rate = \"800kbit/s\", packet = \"1000B\", on = \"500ms\", off = \"500ms\" }",
        );
        sc.insert_str(0, &format!("seed = {seed}\n"));
        common::run(&sc)
    };
    let a = run(1);
    let sent = count(&a, 0, "packets_sent") as f64;
    // 100 packets a second half the time over 100 s: 5,000 (about 200 on
    // periods: the share on varies by some 5 %)
    assert!((sent - 5000.0).abs() < 1000.0, "{sent}");
    assert_eq!(a.flows.digest(), run(1).flows.digest());
    assert_ne!(count(&run(2), 0, "packets_sent") as f64, sent);
}

#[test]
fn a_trace_sends_its_packets_at_their_times() {
    let dir = std::env::temp_dir().join(format!("wavelab-udp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("packets.csv");
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(
        f,
        "time,size\n0,100\n0.5,200B\n500ms,300\n# a comment\n2s,1472"
    )
    .unwrap();
    let flow = format!(
        "start = \"1s\"\nudp = {{ pattern = \"trace\", file = \"{}\" }}",
        path.display()
    );
    let r = common::run(&one_link(5, "rate = \"10Mbit/s\"\ndelay = \"10ms\"", &flow));
    assert_eq!(count(&r, 0, "packets_sent"), 4);
    assert_eq!(count(&r, 0, "bytes_sent"), 100 + 200 + 300 + 1472);
    assert_eq!(count(&r, 0, "packets_received"), 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn video_frames_are_split_into_packets() {
    // 1.2 Mbit/s at 30 fps: frames of 5,000 B, four packets of 1,200 B and
    // one of 200 B, sent together
    let r = common::run(&one_link(
        2,
        "rate = \"100Mbit/s\"\ndelay = \"10ms\"",
        "stop = \"1s\"\nudp = { pattern = \"video\", rate = \"1.2Mbit/s\" }",
    ));
    assert_eq!(count(&r, 0, "packets_sent"), 30 * 5);
    assert_eq!(count(&r, 0, "bytes_sent"), 30 * 5000);
    // the burst's last packet waits behind four 1,228 B packets
    let last = 0.010 + (4.0 * 1228.0 + 228.0) * 8.0 / 100e6;
    assert!((secs(&r, 0, "owd_p99") - last).abs() <= last / 128.0);
}

#[test]
fn the_same_seed_gives_identical_tables() {
    let sc = r#"
        duration = "10s"
        seed = 7
        [[links]]
        between = ["s", "r"]
        rate = "8Mbit/s"
        delay = "20ms"
        queue = "50pkt"
        loss = { model = "bernoulli", p = 0.01 }
        [[flows]]
        from = "s"
        to = "r"
        transport = "udp"
        udp = { pattern = "onoff", rate = "2Mbit/s", packet = "1200B", on = "1s", off = "500ms", playout_deadline = "80ms" }
        [[flows]]
        from = "s"
        to = "r"
        cc = "cubic"
        "#;
    let (fast, slow) = common::run_both(sc);
    let again = common::run(sc);
    assert_eq!(fast.flows.digest(), again.flows.digest());
    assert_eq!(fast.digest(), again.digest());
    // both engine modes agree on the UDP flow
    assert_eq!(fast.flows.digest(), slow.flows.digest());
}

#[test]
fn a_udp_flow_has_no_congestion_control_to_set() {
    let sc = Scenario::from_toml_str(&one_link(
        1,
        "rate = \"10Mbit/s\"\ndelay = \"10ms\"",
        "udp = { pattern = \"voice\" }",
    ))
    .unwrap();
    let mut sim = Simulation::new(sc).unwrap();
    let cc = sim.scenario().flows[0].cc.build(1448, 10, None, 2);
    let e = sim.set_algorithm(0, cc).unwrap_err();
    assert!(e.contains("UDP"), "{e}");
}

#[test]
fn a_ping_measures_the_round_trip_and_the_queue_a_bulk_flow_builds() {
    let ping = "transport = \"ping\"\nping = { interval = \"100ms\" }";
    let scenario = |bulk: bool| beside_bulk(ping, bulk);
    let idle = scenario(false);
    assert_eq!(idle.flows.labels("algorithm")[0], "ping");
    // 201 requests (one every 100 ms from 0 s to the end itself), every
    // one answered but the last
    assert_eq!(count(&idle, 0, "packets_sent"), 201);
    assert_eq!(count(&idle, 0, "rtt_samples"), 200);
    // two propagation delays and two serialisations of 84 B (56 B of data
    // and 28 B of headers) at 8 Mbit/s
    let rtt = 2.0 * (0.020 + 84.0 * 8.0 / 8e6);
    assert!(
        (secs(&idle, 0, "rtt_mean") - rtt).abs() < 1e-9,
        "{}",
        secs(&idle, 0, "rtt_mean")
    );
    assert!((secs(&idle, 0, "min_rtt") - rtt).abs() < 1e-9);
    assert!((secs(&idle, 0, "owd_mean") - rtt / 2.0).abs() < 1e-9);
    let loaded = scenario(true);
    let queue = 100.0 * 1500.0 * 8.0 / 8e6;
    let rise = secs(&loaded, 0, "rtt_p95") - rtt;
    // the requests wait in the data direction's queue, the answers cross
    // the ACK direction, which holds no queue
    assert!(rise > 0.5 * queue && rise < 1.05 * queue, "rise {rise}");
}
