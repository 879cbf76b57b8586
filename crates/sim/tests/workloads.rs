//! Workloads of short transfers: arrivals and sizes drawn from the seed,
//! each transfer a connection whose completion time and slowdown the
//! transfers table holds, and the time series leaving finished transfers
//! out.

use crate::common;
use wavelab_sim::Results;

/// A 10 Mbit/s, 20 ms link `s`-`r` with `workload` (a `[[workloads]]`
/// table's fields) and `flows` (more text) for `secs` seconds.
fn scenario(secs: u32, seed: u64, workload: &str, flows: &str) -> String {
    format!(
        r#"
        duration = "{secs}s"
        seed = {seed}
        [[links]]
        between = ["s", "r"]
        rate = "10Mbit/s"
        delay = "20ms"
        queue = "100pkt"
        {flows}
        [[workloads]]
        name = "web"
        from = "s"
        to = "r"
        {workload}
        "#
    )
}

fn col<'a>(r: &'a Results, name: &str) -> &'a [f64] {
    r.transfers.col(name)
}

/// A file of `text` in the temporary folder, named for the test.
fn file(name: &str, text: &str) -> String {
    let p = std::env::temp_dir().join(format!("wavelab-workloads-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn one_transfer_alone_completes_near_its_ideal() {
    // one transfer of 1,000 bytes at 1 s: one segment, inside the initial
    // window; ideal 2 x 40 ms + 0.8 ms
    let arrivals = file("one.csv", "time,size\n1,1000\n");
    let r = common::run(&scenario(
        3,
        1,
        &format!("arrivals = {{ process = \"file\", file = \"{arrivals}\" }}"),
        "",
    ));
    assert_eq!(r.transfers.rows(), 1);
    assert_eq!(col(&r, "start"), [1.0]);
    assert_eq!(r.transfers.col::<u64>("size"), [1000]);
    assert!((col(&r, "ideal")[0] - 0.0808).abs() < 1e-12);
    let fct = col(&r, "completion_time")[0];
    // what the ideal leaves out: the headers' and the SYN's and FIN's
    // serialisation, well under a millisecond here
    assert!((0.0808..0.0818).contains(&fct), "{fct}");
    assert!((col(&r, "slowdown")[0] - fct / 0.0808).abs() < 1e-12);
    // the flows table has it, as a sized flow named after the workload
    assert_eq!(r.flows.col::<String>("name"), ["web/0"]);
    // the series stop at its completion: samples at 1.0 s and 1.1 s only
    assert_eq!(r.series.rows(), 1);
}

#[test]
fn poisson_arrivals_are_drawn_from_the_seed() {
    let w = "arrivals = { process = \"poisson\", rate = 20 }\n\
             sizes = { distribution = \"exponential\", mean = \"20kB\" }\nstop = \"10s\"";
    let a = common::run(&scenario(12, 1, w, ""));
    let b = common::run(&scenario(12, 1, w, ""));
    let c = common::run(&scenario(12, 2, w, ""));
    let n = a.transfers.rows();
    // 200 expected; a Poisson count is within 4 standard deviations (57)
    assert!((143..=257).contains(&n), "{n}");
    assert_eq!(a.transfers.digest(), b.transfers.digest());
    assert_eq!(a.digest(), b.digest());
    assert_ne!(a.transfers.digest(), c.transfers.digest());
    // arrivals in order, before the stop; every one a flow of its own
    let start = col(&a, "start");
    assert!(start.windows(2).all(|w| w[0] <= w[1]));
    assert!(start.iter().all(|&t| (0.0..10.0).contains(&t)));
    assert_eq!(a.flows.rows(), n);
    // at 20 x 20 kB a second (3.2 Mbit/s of 10) every transfer completes,
    // no sooner than its ideal
    let slowdown = a.transfers.options::<f64>("slowdown");
    assert!(
        slowdown.iter().all(|s| s.is_some_and(|s| s >= 1.0)),
        "{slowdown:?}"
    );
}

#[test]
fn the_delay_series_holds_each_intervals_one_way_delays_and_ping_rtts() {
    // a ping every 100 ms and a voice flow on an idle 10 Mbit/s, 20 ms
    // link (the voice packets 10 ms off the pings, so that none waits for
    // one): every interval's one-way delay is the propagation plus one
    // packet's serialisation, every RTT twice that
    let text = r#"
        duration = "2s"
        output = { delays = true }
        [[links]]
        between = ["s", "r"]
        rate = "10Mbit/s"
        delay = "20ms"
        [[flows]]
        from = "s"
        to = "r"
        transport = "ping"
        ping = { interval = "100ms" }
        [[flows]]
        from = "s"
        to = "r"
        transport = "udp"
        udp = { pattern = "voice" }
        start = "10ms"
    "#;
    let r = common::run(text);
    let d = &r.delays;
    let flow = d.col::<u32>("flow");
    let ping_rtt: Vec<f64> = (d.options::<f64>("rtt_max").iter())
        .zip(flow)
        .filter(|(_, &f)| f == 0)
        .map(|(x, _)| x.unwrap())
        .collect();
    let rtt = 2.0 * (0.020 + 84.0 * 8.0 / 10e6);
    assert!(ping_rtt.len() >= 18, "{}", ping_rtt.len());
    assert!(
        ping_rtt.iter().all(|x| (x - rtt).abs() < 1e-9),
        "{ping_rtt:?}"
    );
    let owd = 0.020 + 188.0 * 8.0 / 10e6;
    let voice: Vec<(u64, f64)> = (d.col::<u64>("packets").iter())
        .zip(d.options::<f64>("owd_mean"))
        .zip(flow)
        .filter(|(_, &f)| f == 1)
        .map(|((&n, x), _)| (n, x.unwrap()))
        .collect();
    // five voice packets an interval once it runs
    assert!(
        voice[2..]
            .iter()
            .all(|&(n, x)| n == 5 && (x - owd).abs() < 1e-9),
        "{voice:?}"
    );
    // the distribution holds every received packet
    let counts = r.owd_distribution.col::<u64>("count");
    let received: u64 = r
        .flows
        .options::<u64>("packets_received")
        .iter()
        .map(|x| x.unwrap())
        .sum();
    assert_eq!(counts.iter().sum::<u64>(), received);
    // off by default
    let off = common::run(&text.replace("output = { delays = true }", ""));
    assert_eq!((off.delays.rows(), off.owd_distribution.rows()), (0, 0));
    assert_eq!(off.digest(), r.digest());
}
