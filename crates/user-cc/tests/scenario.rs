//! Vegas registered under its name and run from a scenario, as a user's
//! algorithm is: its state in the time series, and the behaviour that makes
//! it Vegas (a few segments queued at the bottleneck, no losses) where
//! NewReno fills the buffer.

use wavelab_sim::{Results, Scenario, Simulation};

fn dumbbell(cc: &str) -> String {
    format!(
        r#"
        name = "dumbbell"
        duration = "30s"
        [[links]]
        between = ["s", "r1"]
        rate = "100Mbit/s"
        delay = "1ms"
        [[links]]
        name = "bottleneck"
        between = ["r1", "r2"]
        rate = "10Mbit/s"
        delay = "50ms"
        queue = "87pkt"
        [[links]]
        between = ["r2", "d"]
        rate = "100Mbit/s"
        delay = "1ms"
        [[flows]]
        from = "s"
        to = "d"
        cc = {cc}
        "#
    )
}

fn run(cc: &str) -> Results {
    wavelab_user_cc::register_all().unwrap();
    let sc = Scenario::from_toml_str(&dumbbell(cc)).unwrap();
    let mut sim = Simulation::new(sc).unwrap();
    sim.run();
    sim.results()
}

/// Mean packets queued at the bottleneck's forward direction (dir 2) over
/// the second half of the run, past slow start.
fn mean_queue(r: &Results) -> f64 {
    let dirs = r.queues.col::<u32>("dir");
    let time = r.queues.f64s("time");
    let pk = r.queues.u64s("packets");
    let q: Vec<f64> = (0..dirs.len())
        .filter(|&i| dirs[i] == 2 && time[i] >= 15.0)
        .map(|i| pk[i] as f64)
        .collect();
    q.iter().sum::<f64>() / q.len() as f64
}

#[test]
fn vegas_runs_from_a_scenario_with_its_state_in_the_series() {
    let r = run("\"vegas\"");
    assert_eq!(r.flows.labels("algorithm"), ["vegas"]);
    let base = r.series.f64s("cc_base_rtt");
    let diff = r.series.f64s("cc_diff");
    // the path's RTT: 2 x 52 ms of propagation plus serialisation
    let last_base = *base.last().unwrap();
    assert!((0.104..0.110).contains(&last_base), "{last_base}");
    // once past slow start Vegas keeps between alpha = 1 and beta = 3
    // segments queued, give or take one round's change
    let late: Vec<f64> = diff[diff.len() / 2..].to_vec();
    assert!(late.iter().all(|d| (0.0..=4.5).contains(d)), "{late:?}");
    let vegas_q = mean_queue(&r);
    let reno = run("\"newreno\"");
    let reno_q = mean_queue(&reno);
    assert!(
        vegas_q < 3.0 && reno_q > 20.0,
        "vegas {vegas_q}, newreno {reno_q}"
    );
    assert_eq!(r.flows.u64s("retransmissions"), [0]);
    // and it still fills the link: over 90 % of 10 Mbit/s in 30 s
    let goodput = r.flows.u64s("bytes_delivered")[0] as f64 * 8.0 / 30.0;
    assert!(goodput > 9.0e6 * 0.9, "{goodput}");
}

#[test]
fn its_parameters_come_from_the_scenario_and_are_checked() {
    let wide = run("{ algorithm = \"vegas\", alpha = 6, beta = 8 }");
    let narrow = run("\"vegas\"");
    // more segments allowed in the queue: a longer queue
    assert!(mean_queue(&wide) > mean_queue(&narrow) + 2.0);
    let e = Scenario::from_toml_str(&dumbbell("{ algorithm = \"vegas\", alpha = 4 }"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("beta: 3 must be at least alpha (4)"), "{e}");
    assert!(e.contains("flows[0].cc"), "{e}");
}

#[test]
fn same_scenario_same_results() {
    let a = run("\"vegas\"");
    let b = run("\"vegas\"");
    assert_eq!(a.digest(), b.digest());
}
