//! The packet log's row limit: a run whose log reaches it stops there with a
//! message naming `log_packets`, and keeps its results up to that instant.

use wavelab_sim::{Scenario, Simulation};

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
