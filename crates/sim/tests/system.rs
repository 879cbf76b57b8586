//! System checks: whole simulations whose outcome is known from theory.

use crate::common::{delivered_at, dumbbell, jain, run};
use wavelab_sim::{ColumnData, Results, Table};

#[test]
fn newreno_fills_a_bdp_buffered_bottleneck() {
    // RTT = 2 x (1 + 50 + 1) ms = 104 ms; BDP = 10 Mbit/s x 104 ms = 130 kB
    // = 87 packets of 1500 bytes.
    let text = dumbbell(
        "87pkt",
        "[[flows]]\nfrom = \"sender\"\nto = \"receiver\"\ncc = \"newreno\"\n",
    );
    let r = run(&text);
    let bytes = delivered_at(&r, 0, 60.0) - delivered_at(&r, 0, 10.0);
    let goodput = bytes as f64 * 8.0 / 50.0;
    // payload share of a 1500-byte packet is 1460/1500
    let utilisation = goodput / (10e6 * 1460.0 / 1500.0);
    eprintln!("NewReno utilisation over the last 50 s: {utilisation:.4}");
    assert!(utilisation >= 0.90, "utilisation {utilisation}");
    assert!(utilisation <= 1.0 + 1e-9);
}

fn mathis_run(p: f64) -> (f64, f64) {
    let text = format!(
        r#"
        duration = "1500s"
        seed = 11
        [[links]]
        between = ["s", "d"]
        rate = "1Gbit/s"
        delay = "50ms"
        queue = "100000pkt"
        forward = {{ loss = {{ model = "bernoulli", p = {p} }} }}
        [[flows]]
        from = "s"
        to = "d"
        cc = "newreno"
        tcp = {{ sack = true, delayed_ack = false }}
        "#
    );
    let r = run(&text);
    let bytes = delivered_at(&r, 0, 1500.0) - delivered_at(&r, 0, 100.0);
    let rate = bytes as f64 * 8.0 / 1400.0;
    let rtt = 0.1 + 2.0 * 1540.0 * 8.0 / 1e9; // propagation + serialisation
    let mathis = 1460.0 * 8.0 / rtt * (3.0 / (2.0 * p)).sqrt();
    (rate, mathis)
}

#[test]
fn newreno_sack_follows_the_mathis_formula_under_random_loss() {
    for p in [0.001, 0.005] {
        let (rate, model) = mathis_run(p);
        let ratio = rate / model;
        eprintln!(
            "p = {p}: {:.3} Mbit/s vs Mathis {:.3} Mbit/s, ratio {ratio:.3}",
            rate / 1e6,
            model / 1e6
        );
        assert!((0.75..=1.25).contains(&ratio), "p = {p}: ratio {ratio}");
    }
}

#[test]
fn four_newreno_flows_share_fairly() {
    let text = dumbbell(
        "87pkt",
        "[[flows]]\nfrom = \"sender\"\nto = \"receiver\"\ncc = \"newreno\"\ncount = 4\n",
    );
    let r = run(&text);
    let rates: Vec<f64> = (0..4)
        .map(|f| delivered_at(&r, f, 60.0) as f64 * 8.0 / 60.0)
        .collect();
    let j = jain(&rates);
    eprintln!("rates {rates:?} Jain {j:.4}");
    assert!(j >= 0.95, "Jain's index {j}");
    let total: f64 = rates.iter().sum();
    assert!(total > 0.85 * 10e6 * 1460.0 / 1500.0, "aggregate {total}");
}

fn lossy(seed: u64) -> Results {
    run(&format!(
        r#"
        duration = "20s"
        seed = {seed}
        [[links]]
        between = ["a", "b"]
        rate = "20Mbit/s"
        delay = "10ms"
        queue = "60pkt"
        loss = {{ model = "gilbert_elliott", p_good_bad = 0.001, p_bad_good = 0.3 }}
        [[flows]]
        from = "a"
        to = "b"
        count = 3
        log_packets = true
        "#
    ))
}

fn bits(t: &Table) -> Vec<(String, Vec<u64>)> {
    t.columns
        .iter()
        .map(|c| {
            let v = match &c.data {
                ColumnData::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
                ColumnData::U64(v) => v.clone(),
                ColumnData::I64(v) => v.iter().map(|&x| x as u64).collect(),
                ColumnData::U32(v) => v.iter().map(|&x| x as u64).collect(),
                ColumnData::Bool(v) => v.iter().map(|&x| x as u64).collect(),
                ColumnData::Category { codes, .. } => codes.iter().map(|&x| x as u64).collect(),
                ColumnData::Str(v) => v.iter().map(|s| s.len() as u64).collect(),
            };
            (c.name.clone(), v)
        })
        .collect()
}

#[test]
fn same_seed_is_bit_identical_and_another_seed_is_not() {
    let a = lossy(5);
    let b = lossy(5);
    let c = lossy(6);
    for (x, y) in [
        (&a.series, &b.series),
        (&a.flows, &b.flows),
        (&a.links, &b.links),
        (&a.queues, &b.queues),
        (&a.packets, &b.packets),
    ] {
        assert_eq!(bits(x), bits(y));
    }
    assert_eq!(a.run, b.run);
    assert!(a.packets.rows() > 10_000);
    assert_ne!(bits(&a.packets), bits(&c.packets));
    assert_ne!(
        a.flows.u64s("bytes_delivered"),
        c.flows.u64s("bytes_delivered")
    );
}

#[test]
fn outage_drops_everything_in_both_directions_and_only_inside_the_window() {
    let r = run(r#"
        duration = "12s"
        [[links]]
        between = ["a", "b"]
        rate = "8Mbit/s"
        delay = "40ms"
        queue = "50pkt"
        outages = [{ start = "5s", duration = "2s" }]
        [[flows]]
        from = "a"
        to = "b"
        log_packets = true
        tcp = { min_rto = "200ms" }
        "#);
    let t = r.packets.f64s("time");
    let ev = r.packets.labels("event");
    let is = |i: usize, name: &str| ev[i] == name;
    let acks_inside = (0..t.len())
        .filter(|&i| is(i, "ack") && t[i] >= 5.0 && t[i] < 7.0)
        .count();
    let data_inside = (0..t.len())
        .filter(|&i| is(i, "deliver") && t[i] >= 5.0 && t[i] < 7.0)
        .count();
    assert_eq!(
        (acks_inside, data_inside),
        (0, 0),
        "nothing crosses during the outage"
    );
    let drops = r.links.u64s("dropped_outage");
    assert!(
        drops[0] > 0 && drops[1] > 0,
        "both directions lose packets: {drops:?}"
    );
    // traffic crosses right before and after
    assert!((0..t.len()).any(|i| is(i, "deliver") && t[i] > 4.8 && t[i] < 5.0));
    assert!((0..t.len()).any(|i| is(i, "deliver") && t[i] >= 7.0 && t[i] < 9.0));
    // every outage drop happened inside the window or by a packet in the air at its start
    let cause = r.packets.labels("cause");
    for (i, &ti) in t.iter().enumerate() {
        if is(i, "drop") && cause[i] == "outage" {
            assert!((5.0..7.0 + 0.041).contains(&ti), "outage drop at {ti}");
        }
    }
}

#[test]
fn scheduled_rate_change_changes_the_goodput() {
    let r = run(r#"
        duration = "40s"
        [[links]]
        between = ["a", "b"]
        rate = "2Mbit/s"
        delay = "15ms"
        queue = "30pkt"
        schedule = [{ at = "20s", rate = "8Mbit/s" }]
        [[flows]]
        from = "a"
        to = "b"
        "#);
    let before = (delivered_at(&r, 0, 20.0) - delivered_at(&r, 0, 10.0)) as f64 * 8.0 / 10.0;
    let after = (delivered_at(&r, 0, 40.0) - delivered_at(&r, 0, 30.0)) as f64 * 8.0 / 10.0;
    eprintln!("before {before:.0} after {after:.0}");
    assert!(before > 0.9 * 2e6 * 1460.0 / 1500.0 && before <= 2e6);
    assert!(after > 0.85 * 8e6 * 1460.0 / 1500.0 && after <= 8e6);
    assert_eq!(r.links.u64s("rate")[0], 8_000_000);
}

#[test]
fn finite_flows_record_completion_time() {
    let r = run(r#"
        duration = "30s"
        [[links]]
        between = ["a", "b"]
        rate = "10Mbit/s"
        delay = "10ms"
        [[flows]]
        from = "a"
        to = "b"
        size = "5MB"
        start = "1s"
        "#);
    let ct = r.flows.f64s("completion_time")[0];
    // 5 MB at 10 Mbit/s (payload share 1460/1500) takes about 4.1 s plus slow start
    assert!(ct > 4.1 && ct < 6.0, "completion time {ct}");
    assert_eq!(r.flows.u64s("bytes_delivered")[0], 5_000_000);
}

#[test]
fn stop_time_ends_the_stream_and_the_flow_completes() {
    let r = run(r#"
        duration = "20s"
        [[links]]
        between = ["a", "b"]
        rate = "10Mbit/s"
        delay = "10ms"
        queue = "50pkt"
        [[flows]]
        from = "a"
        to = "b"
        start = "2s"
        stop = "6s"
        "#);
    let at_stop = delivered_at(&r, 0, 6.0);
    let later = delivered_at(&r, 0, 7.0);
    let end = delivered_at(&r, 0, 20.0);
    assert_eq!(
        later, end,
        "nothing new after the data in flight at the stop drained"
    );
    // what was in flight at 6 s (at most a window plus a queue) still arrives
    assert!(later - at_stop < 200_000, "{}", later - at_stop);
    assert_eq!(
        r.flows.u64s("bytes_delivered")[0],
        r.flows.u64s("bytes_sent")[0]
    );
    let ct = r.flows.f64s("completion_time")[0];
    assert!(
        ct > 4.0 && ct < 4.5,
        "completion {ct} s after the 2 s start"
    );
}
