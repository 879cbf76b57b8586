//! CellReplay's replay of a cellular direction (`cellreplay_train` with a
//! heavy `trace`): a bulk flow held to the heavy trace's capacity behind the
//! packet-train trace's base delay, a short transfer slower than a Mahimahi
//! replay of the same heavy trace says (the light opportunities), both
//! engine modes alike, and the errors of a direction that lacks or adds a
//! field.

use crate::common;
use crate::trace::Temp;
use wavelab_sim::Scenario;

/// Heavy opportunities: 4 per millisecond (4 x 1500 B a millisecond, 48
/// Mbit/s of frames).
const HEAVY: &str = "1\n1\n1\n1\n";

/// A train every 100 ms over 1 s: a base delay of 30 ms rising to 50 ms
/// at 500 ms and back, and four light opportunities 10 ms apart.
fn trains() -> String {
    (0..=10)
        .map(|k| {
            let delay = 30 + 4 * (5 - (k as i64 - 5).abs());
            format!("{} {delay} 0 10 20 30\n", k * 100)
        })
        .collect()
}

/// A server and a phone joined by one link whose forward direction is
/// `forward`; one CUBIC flow with SACK of `size` (or bulk) for `secs`.
fn path(forward: &str, size: Option<&str>, secs: u32) -> String {
    let size = size.map_or(String::new(), |s| format!("size = \"{s}\""));
    format!(
        r#"
        duration = "{secs}s"
        [[links]]
        between = ["server", "phone"]
        rate = "100Mbit/s"
        delay = "10ms"
        queue = "400pkt"
        forward = {{ {forward} }}
        [[flows]]
        from = "server"
        to = "phone"
        cc = "cubic"
        tcp = {{ sack = true }}
        {size}
        "#
    )
}

fn replayed(tmp: &Temp) -> String {
    let heavy = tmp.file("down-heavy-pdo", HEAVY);
    let train = tmp.file("down-delay-light-pdo", &trains());
    format!(r#"trace = "{heavy}", cellreplay_train = "{train}""#)
}

#[test]
fn a_bulk_flow_gets_the_heavy_capacity_behind_the_base_delay() {
    let tmp = Temp::new("cellreplay-bulk");
    let (a, b) = common::run_both(&path(&replayed(&tmp), None, 10));
    assert_eq!(a.digest(), b.digest());
    // 48 Mbit/s of 1500-byte frames; the payload of the flow is 1448 of
    // them: at most 46.3 Mbit/s, and CUBIC keeps the heavy queue busy
    let goodput = a.flows.u64s("bytes_delivered")[0] as f64 * 8.0 / 10.0;
    assert!(goodput <= 46.4e6, "{goodput}");
    assert!(goodput > 0.85 * 46.3e6, "{goodput}");
    // no RTT below the smallest base delay (30 ms) and the way back (10 ms)
    let min_rtt = a.flows.f64s("min_rtt")[0];
    eprintln!(
        "goodput {:.2} Mbit/s, min RTT {:.1} ms",
        goodput / 1e6,
        min_rtt * 1e3
    );
    assert!(min_rtt >= 0.040, "{min_rtt}");
    assert!(min_rtt < 0.045, "{min_rtt}");
}

#[test]
fn a_short_transfer_waits_for_the_light_opportunities() {
    // 30 kB (21 segments): the initial window of 10 goes out at once. With
    // Mahimahi's replay of the heavy trace behind the smallest base delay,
    // all of it arrives 30 ms later, 4 a millisecond; with CellReplay's,
    // the first takes the train's base delay, three the light
    // opportunities 10, 20 and 30 ms after it, and the rest wait behind
    // the last of them: the first window's round trip is 30 ms longer. The
    // next window comes while the delay stage still holds packets, so it
    // continues the train past its light opportunities, in the heavy queue
    // behind the base delay, as Mahimahi's (0.125 s against 0.155 s).
    let tmp = Temp::new("cellreplay-short");
    let heavy = tmp.file("heavy", HEAVY);
    let completion = |forward: &str| {
        let r = common::run(&path(forward, Some("30kB"), 5));
        r.flows.f64s("completion_time")[0]
    };
    let mahimahi = completion(&format!(r#"trace = "{heavy}", delay = "30ms""#));
    let cellreplay = completion(&replayed(&tmp));
    assert!(mahimahi.is_finite() && cellreplay.is_finite());
    eprintln!("30 kB: Mahimahi {mahimahi:.3} s, CellReplay {cellreplay:.3} s");
    assert!(
        cellreplay - mahimahi > 0.0299,
        "CellReplay {cellreplay} s, Mahimahi {mahimahi} s"
    );
}

#[test]
fn a_direction_without_its_heavy_trace_or_with_a_second_delay_is_an_error() {
    let tmp = Temp::new("cellreplay-errors");
    let train = tmp.file("train", &trains());
    let e = |forward: &str| {
        Scenario::from_toml_str(&path(forward, None, 1))
            .unwrap_err()
            .to_string()
    };
    assert!(e(&format!(r#"cellreplay_train = "{train}""#))
        .starts_with("links[0].forward.trace: CellReplay replays the packet-train trace"),);
    let heavy = tmp.file("heavy", HEAVY);
    let bad = tmp.file("bad", "0 30 0 10\n100 x\n");
    assert_eq!(
        e(&format!(r#"trace = "{heavy}", cellreplay_train = "{bad}""#)),
        format!(
            "links[0].forward.cellreplay_train: {bad} line 2: \"x\" is not a delay (CellReplay's \
             packet-train format: a time in whole milliseconds, the base delay and the light \
             delivery offsets in milliseconds, separated by spaces)"
        )
    );
    assert!(e(r#"cellreplay_idle = "5ms""#)
        .starts_with("links[0].forward.cellreplay_idle: it goes with cellreplay_train"));
    let both =
        format!(r#"trace = "{heavy}", cellreplay_train = "{train}", delay_trace = "{train}""#);
    assert!(
        e(&both).starts_with("links[0].forward.delay_trace:"),
        "{}",
        e(&both)
    );
    // the clock-free model (the emulator's) has no CellReplay: said
    let sc = Scenario::from_toml_str(&path(&replayed(&tmp), None, 1)).unwrap();
    let e = wavelab_sim::link_models(&sc).unwrap_err().to_string();
    assert!(e.starts_with("links[0].forward.cellreplay_train: "), "{e}");
}
