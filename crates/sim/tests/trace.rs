//! Trace-driven links. Mahimahi delivery-opportunity
//! traces as a link direction's rate source: the shipped synthetic cellular
//! trace under TCP, in both engine modes; a constant trace's capacity. CSV
//! traces of a direction's delay (first in, first out unless `reorder`),
//! rate and loss: arrival order at packet level, capacity, loss. The shipped
//! LEO-like delay trace. Errors that name the file and the line, or the
//! field.

use crate::common;

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
    let tmp = Temp::new("trace");
    let file = tmp.file("c12.down", &"1\n".repeat(12));
    let text = path(&file, 5).replace("100Mbit/s", "1Gbit/s");
    let r = common::run(&text);
    let sent = r.links.u64s("sent_packets")[2];
    // at most 12 frames per millisecond, and the flow fills most of it
    assert!(sent <= 12 * 5000, "{sent}");
    assert!(sent > 12 * 5000 / 2, "{sent}");
}

#[test]
fn a_bad_trace_is_named_with_its_file_and_line() {
    let tmp = Temp::new("badtrace");
    let name = tmp.file("bad.down", "1\n2\n2.5\n");
    let e = Scenario::from_toml_str(&path(&name, 5))
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
        e.starts_with("links[1].forward.trace: a Mahimahi trace runs in"),
        "{e}"
    );
}

/// A file under a fresh temporary folder, written with `text`.
/// A temporary folder of trace files, removed at the end of the test.
pub(crate) struct Temp(std::path::PathBuf);

impl Temp {
    pub(crate) fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("wavelab-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Temp(dir)
    }
    pub(crate) fn file(&self, name: &str, text: &str) -> String {
        let f = self.0.join(name);
        std::fs::write(&f, text).unwrap();
        f.to_str().unwrap().to_string()
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// One link from "server" to "phone" (10 Mbit/s, 20 ms, a 2000-packet
/// queue) whose forward direction has the settings `forward`; one NewReno
/// flow with SACK that logs its packets, for `secs` seconds.
fn one_link(forward: &str, secs: u32) -> String {
    format!(
        r#"
        duration = "{secs}s"
        [[links]]
        between = ["server", "phone"]
        rate = "10Mbit/s"
        delay = "20ms"
        queue = "2000pkt"
        forward = {{ {forward} }}
        [[flows]]
        from = "server"
        to = "phone"
        tcp = {{ sack = true }}
        log_packets = true
        "#
    )
}

/// The stream offsets of the first transmissions of data segments in the
/// order they reached the receiver.
fn first_deliveries(r: &wavelab_sim::Results) -> Vec<u64> {
    let p = &r.packets;
    let (ev, kind, seq) = (p.labels("event"), p.labels("kind"), p.u64s("seq"));
    (0..ev.len())
        .filter(|&i| ev[i] == "deliver" && kind[i] == "data")
        .map(|i| seq[i])
        .collect()
}

/// The issue's check: a delay trace that drops from 300 ms to 10 ms at 2 s
/// (the slow-starting flow has some 200 segments in the pipe then). By
/// default the pipe is first in, first out: the segments reach the
/// receiver in the order they were sent, in both engine modes. With
/// `reorder = true` those sent after the drop overtake those before it.
#[test]
fn a_delay_drop_from_300_to_10_ms_does_not_reorder_by_default_and_does_when_allowed() {
    let tmp = Temp::new("delaydrop");
    let drop = tmp.file("drop.csv", "time,delay\n0,300ms\n2s,10ms\n");
    let (a, b) = common::run_both(&one_link(&format!(r#"delay_trace = "{drop}""#), 3));
    assert_eq!(a.digest(), b.digest());
    let order = first_deliveries(&a);
    assert!(order.len() > 400, "{} deliveries", order.len());
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "reordered without reorder = true"
    );
    let r = common::run(&one_link(
        &format!(r#"delay_trace = "{drop}", reorder = true"#),
        3,
    ));
    let order = first_deliveries(&r);
    let passed = order.windows(2).filter(|w| w[0] > w[1]).count();
    assert!(passed > 0, "nothing overtaken with reorder = true");
    // the first segment to arrive after the drop overtook many: it was
    // sent after everything still in the 300 ms pipe
    let max_before = order.iter().scan(0, |m, &s| {
        let before = *m;
        *m = (*m).max(s);
        Some(before)
    });
    let overtaken = order
        .iter()
        .zip(max_before)
        .filter(|(s, m)| **s < *m)
        .count();
    assert!(overtaken > 50, "{overtaken} deliveries behind a later one");
}

/// Linear interpolation: the delay moves between two points, so a packet's
/// one-way delay is read off the line between them (checked on the time
/// to deliver the SYN, sent at 0 on an idle link: 40 bytes at 10 Mbit/s,
/// then the delay at the end of its serialisation).
#[test]
fn a_linear_delay_trace_is_read_between_its_points() {
    let tmp = Temp::new("lineardelay");
    let ramp = tmp.file("ramp.csv", "0,100ms\n1,300ms\n");
    let first_arrival = |forward: &str| {
        let r = common::run(&one_link(forward, 1));
        let p = &r.packets;
        let ev = p.labels("event");
        let i = ev.iter().position(|e| *e == "deliver").unwrap();
        p.f64s("time")[i]
    };
    let step = first_arrival(&format!(r#"delay_trace = "{ramp}""#));
    let linear = first_arrival(&format!(
        r#"delay_trace = "{ramp}", delay_interpolation = "linear""#
    ));
    // the SYN's serialisation takes some 50 us (f = step - 0.1); its delay
    // is then 100 ms as a step, and 100 ms + 200 ms/s x f on the line
    let f = step - 0.100;
    assert!(f > 0.0 && f < 1e-4, "{step}");
    assert!(
        ((linear - step) - 0.2 * f).abs() < 1e-8,
        "{linear} vs {step}"
    );
}

/// A CSV rate trace: 2 Mbit/s for 5 s, then 8 Mbit/s. A backlogged CUBIC
/// flow gets the capacity of each part (payload: 1460 of every 1500
/// bytes), in both engine modes.
#[test]
fn a_csv_rate_trace_gives_the_capacity_it_says() {
    let tmp = Temp::new("ratecsv");
    let rate = tmp.file("rate.csv", "time,rate\n0,2Mbit/s\n5,8000000\n");
    let text = one_link(&format!(r#"rate_trace = "{rate}""#), 10).replace(
        "tcp = { sack = true }",
        "cc = \"cubic\"\ntcp = { sack = true }",
    );
    let (a, b) = common::run_both(&text);
    assert_eq!(a.digest(), b.digest());
    let payload = 1460.0 / 1500.0;
    let got = |t0: f64, t1: f64| {
        (common::delivered_at(&a, 0, t1) - common::delivered_at(&a, 0, t0)) as f64 * 8.0 / (t1 - t0)
    };
    let slow = got(2.0, 5.0);
    let fast = got(7.0, 10.0);
    assert!(
        slow <= 2e6 * payload * 1.001 && slow > 2e6 * payload * 0.9,
        "{slow}"
    );
    assert!(
        fast <= 8e6 * payload * 1.001 && fast > 8e6 * payload * 0.9,
        "{fast}"
    );
}

/// A CSV loss trace: no loss for 10 s, then 3 % of packets. The direction
/// drops nothing before 10 s, and a fraction within four standard errors
/// of 0.03 of the packets it serialises after; in both engine modes.
#[test]
fn a_csv_loss_trace_loses_the_fraction_it_says_when_it_says() {
    let tmp = Temp::new("losscsv");
    let loss = tmp.file("loss.csv", "# per packet\n0,0\n10s,0.03\n");
    let (a, b) = common::run_both(&one_link(&format!(r#"loss_trace = "{loss}""#), 60));
    assert_eq!(a.digest(), b.digest());
    let p = &a.packets;
    let (ev, cause, time, link) = (
        p.labels("event"),
        p.labels("cause"),
        p.f64s("time"),
        p.col::<i64>("link"),
    );
    let drops: Vec<f64> = (0..ev.len())
        .filter(|&i| ev[i] == "drop" && cause[i] == "random" && link[i] == 0)
        .map(|i| time[i])
        .collect();
    assert!(drops.iter().all(|&t| t >= 10.0), "a drop before 10 s");
    // packets the direction finished after 10 s: its total less those that
    // finished before, which (nothing lost then) all arrived 20 ms later
    let sent = a.links.u64s("sent_packets")[0];
    let is_ack = p.col::<bool>("is_ack");
    let sent_by_10 = (0..ev.len())
        .filter(|&i| ev[i] == "deliver" && !is_ack[i] && time[i] < 10.020)
        .count() as u64;
    let n = (sent - sent_by_10) as f64;
    let frac = drops.len() as f64 / n;
    let se = (0.03 * 0.97 / n).sqrt();
    assert!((frac - 0.03).abs() < 4.0 * se, "{frac} of {n}");
    assert_eq!(
        a.links.u64s("dropped_random")[0],
        drops.len() as u64,
        "the counters agree with the log"
    );
}

/// A loss trace is the loss of each attempt under link-layer ARQ: with a
/// per-attempt loss of 0.4 from the trace and 3 retries, a fraction 0.4^4
/// of the frames is lost after all its attempts, within four standard
/// errors, and 0.4 / 0.6 retries are made per frame delivered.
#[test]
fn a_loss_trace_under_arq_is_the_loss_of_each_attempt() {
    let tmp = Temp::new("arqloss");
    let loss = tmp.file("loss.csv", "0,0.4\n");
    let text = one_link(
        &format!(r#"loss_trace = "{loss}", arq = {{ retries = 3, retry_delay = "1ms" }}"#),
        60,
    );
    let r = common::run(&text);
    let c = |name: &str| r.links.u64s(name)[0] as f64;
    let frames = c("sent_packets");
    let residual = c("arq_residual") / frames;
    let want = 0.4f64.powi(4);
    let se = (want * (1.0 - want) / frames).sqrt();
    assert!(frames > 5000.0, "{frames}");
    assert!((residual - want).abs() < 4.0 * se, "{residual} of {frames}");
    let attempts = c("arq_attempts") / frames;
    let want_attempts = (1.0 - want) / 0.6;
    assert!(
        (attempts - want_attempts).abs() < 0.03,
        "{attempts} attempts a frame, want {want_attempts}"
    );
}

/// The shipped LEO-like delay trace (`scenarios/leo-delay.toml`) in both
/// engine modes: a CUBIC flow keeps most of the 20 Mbit/s through its
/// jumps.
#[test]
fn the_shipped_leo_delay_scenario_runs_in_both_modes() {
    let dir = format!("{}/../../scenarios", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(format!("{dir}/leo-delay.toml"))
        .unwrap()
        .replace("\"traces/", &format!("\"{dir}/traces/"))
        .replace("duration = \"120s\"", "duration = \"40s\"");
    let (a, b) = common::run_both(&text);
    assert_eq!(a.digest(), b.digest());
    let goodput = a.flows.u64s("bytes_delivered")[0] as f64 * 8.0 / 40.0;
    assert!(goodput > 15e6, "{goodput}");
}

#[test]
fn bad_csv_traces_and_conflicting_settings_are_named() {
    let tmp = Temp::new("badcsv");
    let bad = tmp.file("bad.csv", "time,delay\n0,300ms\n1,fast\n");
    let e = Scenario::from_toml_str(&one_link(&format!(r#"delay_trace = "{bad}""#), 5))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "links[0].forward.delay_trace: {bad} line 3: \"fast\" is not a delay (seconds, or a duration with its unit such as \"300ms\")"
        )
    );
    let e = Scenario::from_toml_str(&one_link(r#"loss_trace = "/no/such.csv""#, 5))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("links[0].forward.loss_trace: /no/such.csv: cannot be read"),
        "{e}"
    );
    let rate = tmp.file("rate.csv", "0,1Mbit/s\n");
    let with_schedule = one_link(&format!(r#"rate_trace = "{rate}""#), 5).replace(
        "queue = \"2000pkt\"",
        "queue = \"2000pkt\"\nschedule = [{ at = \"1s\", delay = \"5ms\" }, { at = \"2s\", direction = \"forward\", rate = \"5Mbit/s\" }]",
    );
    assert_eq!(
        Scenario::from_toml_str(&with_schedule)
            .unwrap_err()
            .to_string(),
        "links[0].schedule[1].rate: the forward direction's rate comes from its rate_trace; a change of it here would be ignored"
    );
    assert_eq!(
        Scenario::from_toml_str(&one_link(r#"delay_interpolation = "linear""#, 5))
            .unwrap_err()
            .to_string(),
        "links[0].forward.delay_interpolation: there is no delay_trace to interpolate"
    );
    // the clock-free model (the emulator's) has CSV traces, and no reordering
    let delay = tmp.file("d.csv", "0,10ms\n");
    let sc = Scenario::from_toml_str(&one_link(&format!(r#"delay_trace = "{delay}""#), 5)).unwrap();
    assert_eq!(wavelab_sim::link_models(&sc).unwrap().len(), 2);
    let sc = Scenario::from_toml_str(&one_link(
        &format!(r#"delay_trace = "{delay}", reorder = true"#),
        5,
    ))
    .unwrap();
    let e = wavelab_sim::link_models(&sc).unwrap_err().to_string();
    assert!(
        e.starts_with("links[0].forward.reorder: reordering runs in"),
        "{e}"
    );
}
