//! Mahimahi delivery-opportunity traces as a link direction's rate source
//! (issue 24, item 3): the shipped synthetic cellular trace under TCP, in
//! both engine modes; a constant trace's capacity; errors that name the
//! file and the line.

mod common;

use std::io::Write;
use wavelab_sim::Scenario;

fn cellular() -> String {
    format!(
        "{}/../../scenarios/traces/cellular.down",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A server behind a 100 Mbit/s link, then a hop whose downlink is the
/// trace `trace` (`rate` is not used on it); one CUBIC flow for `secs`.
fn path(trace: &str, secs: u32) -> String {
    format!(
        r#"
        duration = "{secs}s"
        [[links]]
        between = ["server", "bs"]
        rate = "100Mbit/s"
        delay = "10ms"
        [[links]]
        name = "cell"
        between = ["bs", "phone"]
        rate = "1Mbit/s"
        delay = "20ms"
        queue = "200pkt"
        forward = {{ trace = "{trace}" }}
        [[flows]]
        from = "server"
        to = "phone"
        cc = "cubic"
        tcp = {{ sack = true }}
        "#
    )
}

#[test]
fn a_cellular_trace_carries_a_flow_in_both_modes_within_its_capacity() {
    let (a, b) = common::run_both(&path(&cellular(), 20));
    assert_eq!(a.digest(), b.digest());
    let lines = std::fs::read_to_string(cellular()).unwrap().lines().count() as u64;
    // the trace's direction is 2: no more packets than opportunities, and
    // far more than its 1 Mbit/s rate would carry (1,667 packets in 20 s)
    let sent = a.links.u64s("sent_packets")[2];
    assert!(sent <= lines, "{sent} > {lines}");
    assert!(sent > lines / 2, "{sent} of {lines} opportunities used");
    let goodput = a.flows.u64s("bytes_delivered")[0] as f64 * 8.0 / 20.0;
    assert!(goodput > 5e6, "{goodput}");
}

/// A trace of 12 lines per millisecond over 1 ms (it wraps every 1 ms) is
/// 12 x 1500 bytes per millisecond: 144 Mbit/s of frames. A flow with a
/// large window through it is held to that.
#[test]
fn a_constant_trace_of_twelve_lines_a_millisecond_is_144_mbit_s() {
    let dir = std::env::temp_dir().join(format!("wavelab-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("c12.down");
    std::fs::write(&file, "1\n".repeat(12)).unwrap();
    let text = path(file.to_str().unwrap(), 5).replace("100Mbit/s", "1Gbit/s");
    let r = common::run(&text);
    let sent = r.links.u64s("sent_packets")[2];
    // at most 12 frames per millisecond, and the flow fills most of it
    assert!(sent <= 12 * 5000, "{sent}");
    assert!(sent > 12 * 5000 / 2, "{sent}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_trace_is_named_with_its_file_and_line() {
    let dir = std::env::temp_dir().join(format!("wavelab-badtrace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.down");
    let mut f = std::fs::File::create(&file).unwrap();
    writeln!(f, "1\n2\n2.5").unwrap();
    let name = file.to_str().unwrap();
    let e = Scenario::from_toml_str(&path(name, 5))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "links[1].forward.trace: {name} line 3: \"2.5\" is not a timestamp (a whole number of milliseconds)"
        )
    );
    let e = Scenario::from_toml_str(&path("/no/such.down", 5))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("links[1].forward.trace: /no/such.down: cannot be read"),
        "{e}"
    );
    // the clock-free model (the emulator's) has no traces: said, not ignored
    let sc = Scenario::from_toml_str(&path(&cellular(), 5)).unwrap();
    let e = wavelab_sim::link_models(&sc).unwrap_err().to_string();
    assert!(
        e.starts_with("links[1].forward.trace: a trace runs in"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
