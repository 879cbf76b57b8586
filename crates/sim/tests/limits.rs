//! The limits enforced while a run goes: the packet log's rows and the
//! cross-layer notifications (link-layer reports of retried frames depend
//! on the losses). A run that reaches one stops there with a message naming
//! the fields that asked for them, and keeps its results up to that instant.
//! And an interrupt check stops `run_until` where it is.

use std::sync::atomic::{AtomicBool, Ordering};
use wavelab_sim::{Scenario, Simulation};
use wavelab_tcp::Instant;

const SCENARIO: &str = r#"
    name = "logged"
    duration = "20s"
    [[links]]
    between = ["a", "b"]
    rate = "10Mbit/s"
    delay = "10ms"
    queue = "50pkt"
    [[flows]]
    name = "bulk"
    from = "a"
    to = "b"
    log_packets = true
    [[flows]]
    from = "a"
    to = "b"
"#;

#[test]
fn a_run_stops_when_its_packet_log_reaches_the_limit() {
    let sc = Scenario::from_toml_str(SCENARIO).unwrap();
    let mut full = Simulation::new(sc.clone()).unwrap();
    full.run();
    assert!(full.stopped().is_none());
    let all_rows = full.results().packets.rows();
    assert!(all_rows > 20_000, "{all_rows} rows");

    let mut sim = Simulation::new(sc).unwrap();
    sim.set_log_limit(10_000);
    for k in 1..=20 {
        sim.run_until(wavelab_tcp::Instant::from_nanos(k * 1_000_000_000));
    }
    let why = sim.stopped().expect("the run stopped");
    assert!(
        why.starts_with("log_packets: the packet log reached 10"),
        "{why}"
    );
    assert!(why.contains("(at most 10000)"), "{why}");
    assert!(why.contains("flows[0] (bulk)"), "{why}");
    assert!(sim.is_done());
    let r = sim.results();
    let rows = r.packets.rows();
    // checked at each periodic sync: at most one sync period of rows beyond
    assert!((10_000..12_000).contains(&rows), "{rows} rows");
    let stopped_at = r.run.simulated.as_secs_f64();
    assert!(stopped_at > 0.5 && stopped_at < 19.0, "{stopped_at}");
    // the tables end where the run stopped
    let last_sample = r.series.f64s("time").iter().cloned().fold(0.0, f64::max);
    assert!(last_sample <= stopped_at, "{last_sample} > {stopped_at}");
    // running further does nothing
    sim.run();
    assert_eq!(sim.results().packets.rows(), rows);
}

/// A 20 s NewReno flow over a lossy ARQ hop reporting its retried frames.
const REPORTING: &str = r#"
    duration = "20s"
    [[links]]
    between = ["a", "b"]
    rate = "10Mbit/s"
    delay = "10ms"
    queue = "100000pkt"
    forward = { loss = { model = "bernoulli", p = 0.2 }, arq = { retries = 7, report = "retried" } }
    [[flows]]
    from = "a"
    to = "b"
"#;

/// Reports of retried frames grew the notifications table without bound
/// (a 1 Gbit/s hop for 600 s: under a memory cap the process aborted with
/// nothing written); the run now stops at the limit.
#[test]
fn a_run_stops_when_its_notifications_reach_the_limit() {
    let sc = Scenario::from_toml_str(REPORTING).unwrap();
    let mut full = Simulation::new(sc.clone()).unwrap();
    full.run();
    let all = full.results().notifications.rows();
    assert!(
        full.stopped().is_none() && all > 2_000,
        "{all} notifications"
    );

    let mut sim = Simulation::new(sc).unwrap();
    sim.set_notice_limit(500);
    sim.run();
    let why = sim.stopped().expect("the run stopped");
    assert!(
        why.starts_with("links[0].forward.arq.report: the cross-layer notifications reached "),
        "{why}"
    );
    assert!(why.contains("(at most 500)"), "{why}");
    let r = sim.results();
    let rows = r.notifications.rows();
    assert!((500..1_500).contains(&rows), "{rows} rows");
    let stopped_at = r.run.simulated.as_secs_f64();
    assert!(stopped_at > 0.1 && stopped_at < 19.0, "{stopped_at}");
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// A driver whose congestion controls run in an interpreter stops a run
/// where it is when its user interrupts it (Ctrl-C, SIGTERM): the run is not
/// ended, its results so far are read, and it could go on.
#[test]
fn an_interrupt_check_stops_run_until_where_it_is() {
    let sc = Scenario::from_toml_str(SCENARIO).unwrap();
    let mut sim = Simulation::new(sc).unwrap();
    sim.set_interrupt_check(|| INTERRUPTED.load(Ordering::Relaxed));
    sim.run_until(Instant::from_nanos(2_000_000_000));
    assert_eq!(sim.now(), Instant::from_nanos(2_000_000_000));
    INTERRUPTED.store(true, Ordering::Relaxed);
    sim.run_until(Instant::from_nanos(20_000_000_000));
    let at = sim.now().as_secs_f64();
    assert!(at > 2.0 && at < 2.5, "stopped at {at} s");
    assert!(!sim.is_done() && sim.stopped().is_none());
    let r = sim.results();
    assert!((r.run.simulated.as_secs_f64() - at).abs() < 1e-9);
    INTERRUPTED.store(false, Ordering::Relaxed);
    sim.run();
    assert!(sim.is_done());
}
