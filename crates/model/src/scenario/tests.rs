//! Tests of the schema and its validation through whole scenarios.

use super::*;
use wavelab_tcp::Duration;

const BASE: &str = r#"
    duration = "10s"
    [[links]]
    between = ["a", "b"]
    rate = "10Mbit/s"
    delay = "25ms"
    queue = "100pkt"
    [[flows]]
    from = "a"
    to = "b"
"#;

/// The error message a scenario written as TOML gets (for the tests of
/// this module, `limits` and `names`).
pub(crate) fn err(toml_text: &str) -> String {
    Scenario::from_toml_str(toml_text).unwrap_err().to_string()
}

#[test]
fn minimal_scenario_gets_defaults() {
    let s = Scenario::from_toml_str(BASE).unwrap();
    assert_eq!(s.seed, 1);
    assert_eq!(s.output.interval, Duration::from_millis(100));
    assert_eq!(s.flows[0].cc.name(), "newreno");
    assert_eq!(s.links[0].queue, QueueLimit::Packets(100));
    // the JSON form round-trips
    let again = Scenario::from_json_str(&s.to_json()).unwrap();
    assert_eq!(again, s);
}

#[test]
fn bad_rate_names_field_and_value() {
    let t = BASE.replace("\"10Mbit/s\"", "\"8 Mbps/s\"");
    assert_eq!(
        err(&t),
        "links[0].rate: \"8 Mbps/s\" is not a rate, write e.g. \"8Mbit/s\""
    );
}

#[test]
fn unknown_fields_are_rejected_with_their_path() {
    let t = BASE.replace("queue = \"100pkt\"", "queue = \"100pkt\"\nqeue = 3");
    let e = err(&t);
    assert!(e.starts_with("links[0].qeue: unknown field `qeue`"), "{e}");
    let t = BASE.replace(
        "to = \"b\"",
        "to = \"b\"\n[flows.tcp]\nmss = 1000\nsak = true",
    );
    let e = err(&t);
    assert!(
        e.starts_with("flows[0].tcp.sak: unknown field `sak`"),
        "{e}"
    );
}

#[test]
fn semantic_errors_name_the_field() {
    assert_eq!(
        err(&BASE.replace("to = \"b\"", "to = \"c\"")),
        "flows[0].to: \"c\" is not a node; nodes are a, b"
    );
    assert_eq!(
        err(&BASE.replace("to = \"b\"", "to = \"b\"\ntcp = { mss = 10 }")),
        "flows[0].tcp.mss: 10 is out of range 64..=65495 bytes"
    );
    assert_eq!(
        err(&BASE.replace(
            "queue = \"100pkt\"",
            "queue = \"100pkt\"\nloss = { model = \"bernoulli\", p = 1.5 }"
        )),
        "links[0].loss.p: 1.5 is not a probability (0 to 1)"
    );
    assert_eq!(
        err(&BASE.replace("delay = \"25ms\"", "delay = 25")),
        "links[0].delay: 25 has no unit; write a duration with a unit, e.g. \"240ms\""
    );
    assert_eq!(
        err(&BASE.replace("to = \"b\"", "to = \"b\"\ncc = \"vegas\"")),
        "flows[0].cc: \"vegas\" is not a congestion-control algorithm, choose one of tahoe, reno, newreno, westwood, cubic, dctcp, prague, bbr, bbr3, wave, etcpv0, etcpv1, wsc-tcp"
    );
    assert!(err("duration = ").starts_with("not valid TOML"));
    assert_eq!(
        err(&BASE.replace("delay = \"25ms\"", "")),
        "links[0].delay: missing (it is required)"
    );
    assert_eq!(
        err(&BASE.replace("duration = \"10s\"", "")),
        "duration: missing (it is required)"
    );
}

#[test]
fn handover_errors_name_the_field() {
    let with = |h: &str| {
        BASE.replace(
            "queue = \"100pkt\"",
            &format!("queue = \"100pkt\"\nhandovers = [{h}]"),
        )
    };
    Scenario::from_toml_str(&with(
        r#"{ at = "5s", outage = "2s", rate = "8Mbit/s", delay = "240ms" }"#,
    ))
    .unwrap();
    Scenario::from_toml_str(&with(
        r#"{ at = "steady", outage = "2s", steady = { earliest = "2s" } }"#,
    ))
    .unwrap();
    assert_eq!(
        err(&with(r#"{ at = "soon", outage = "2s" }"#)),
        "links[0].handovers[0].at: \"soon\" is not a time, write e.g. \"30s\", or \"steady\""
    );
    assert_eq!(
        err(&with(r#"{ at = "10s", outage = "2s" }"#)),
        "links[0].handovers[0].at: 10s is not before the end of the run (10s)"
    );
    assert_eq!(
        err(&with(r#"{ at = "5s" }"#)),
        "links[0].handovers[0]: changes nothing: set an outage, or the new rate, delay, queue or loss"
    );
    assert_eq!(
        err(&with(
            r#"{ at = "steady", outage = "1s", steady = { flow = 3, earliest = "1s" } }"#
        )),
        "links[0].handovers[0].steady.flow: 3 is not a flow index; there are 1 flows"
    );
}

/// `steady = { earliest = "8s", latest = "2s" }` was accepted and the
/// handover happened at 2 s; events at or after the end silently never
/// happened.
#[test]
fn inconsistent_times_are_refused() {
    let with = |h: &str| BASE.replace("queue = \"100pkt\"", &format!("queue = \"100pkt\"\n{h}"));
    assert_eq!(
        err(&with(
            r#"handovers = [{ at = "steady", outage = "1s", steady = { earliest = "8s", latest = "2s" } }]"#
        )),
        "links[0].handovers[0].steady.latest: 2s is before steady.earliest (8s)"
    );
    assert_eq!(
        err(&with(r#"handovers = [{ at = "steady", outage = "1s" }]"#)),
        "links[0].handovers[0].steady.earliest: 10s is not before the end of the run (10s), so the handover could never happen (the default is 10s)"
    );
    assert_eq!(
        err(&with(r#"schedule = [{ at = "12s", rate = "1Mbit/s" }]"#)),
        "links[0].schedule[0].at: 12s is not before the end of the run (10s)"
    );
    assert_eq!(
        err(&with(r#"outages = [{ start = "10s", duration = "1s" }]"#)),
        "links[0].outages[0].start: 10s is not before the end of the run (10s)"
    );
    Scenario::from_toml_str(&with(
        r#"handovers = [{ at = "steady", outage = "1s", steady = { earliest = "2s", latest = "2s" } }]"#,
    ))
    .unwrap();
}

/// `delay = "1e30s"` saturated to 2^64 - 1 ns and the run went ahead;
/// `duration = "1e20h"` was reported as a problem of `output.interval`.
#[test]
fn out_of_range_durations_are_refused_with_the_value_as_written() {
    assert_eq!(
        err(&BASE.replace("\"25ms\"", "\"1e30s\"")),
        "links[0].delay: \"1e30s\" is too long (at most 1000000000s, about 31.7 years)"
    );
    assert_eq!(
        err(&BASE.replace("\"10s\"", "\"1e20h\"")),
        "duration: \"1e20h\" is too long (at most 1000000000s, about 31.7 years)"
    );
    let h = r#"handovers = [{ at = "1e30s", outage = "1s" }]"#;
    assert_eq!(
        err(&BASE.replace("queue = \"100pkt\"", &format!("queue = \"100pkt\"\n{h}"))),
        "links[0].handovers[0].at: \"1e30s\" is too long (at most 1000000000s, about 31.7 years)"
    );
}

#[test]
fn commands_are_for_the_emulator_only() {
    let with = |f: &str| BASE.replace("to = \"b\"", &format!("to = \"b\"\n{f}"));
    let sc = Scenario::from_toml_str(&with("cmd = \"iperf3 -c $WAVELAB_TO\"")).unwrap();
    assert_eq!(
        sc.check_simulable().unwrap_err().to_string(),
        "flows[0].cmd: a command runs only under `wavelab emulate`; remove it to simulate the flow"
    );
    assert_eq!(err(&with("cmd = \" \"")), "flows[0].cmd: is empty");
    assert_eq!(
        err(&with("receiver_cmd = \"iperf3 -s\"")),
        "flows[0].receiver_cmd: needs cmd: the built-in sender talks only to the built-in receiver"
    );
    // absent, they stay out of the normalised form (and of store keys)
    let plain = Scenario::from_toml_str(BASE).unwrap();
    assert!(!plain.to_json().contains("cmd"));
}

#[test]
fn absurd_sampling_is_refused() {
    let t = BASE.replace(
        "duration = \"10s\"",
        "duration = \"10s\"\noutput = { interval = \"1ns\" }",
    );
    assert_eq!(
        err(&t),
        "output.interval: 1ns over 10s makes 10000000000 samples per flow (at most 10000000); use a longer interval"
    );
}

#[test]
fn queue_limits_parse() {
    assert_eq!(parse_queue("100pkt").unwrap(), QueueLimit::Packets(100));
    assert_eq!(parse_queue("150KB").unwrap(), QueueLimit::Bytes(150_000));
    assert!(parse_queue("100").is_err());
}
