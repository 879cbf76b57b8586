//! The virtual-time mode against the reference mode (explicit serialisation
//! and arrival events, `Simulation::new_reference`): on random scenarios the
//! two must give bit-identical results, at the end and at every point where
//! a run is paused. The scenarios mix what can interact: chains and a
//! dumbbell (directions fed by several links), every algorithm, SACK and not,
//! delayed ACKs and not, queues in packets and bytes, random and bursty
//! loss, schedules of changes on one or both directions, outages, handovers
//! at a time and at "steady", finite transfers, stops, the packet log; and a
//! multi-homed node whose handoffs (make-before-break and break-before-make,
//! with what the old link holds lost or delivered, notified to the senders
//! or not) switch the routes of flows in both directions.

use proptest::prelude::*;
use wavelab_sim::{Scenario, Simulation};
use wavelab_tcp::Instant;

const ALGORITHMS: [&str; 10] = [
    "tahoe", "reno", "newreno", "westwood", "cubic", "bbr", "bbr3", "wave", "etcpv0", "etcpv1",
];

#[derive(Clone, Debug)]
struct Link {
    rate_kbps: u64,
    delay_ms: u64,
    queue: String,
    loss: String,
    extra: String,
}

fn link() -> impl Strategy<Value = Link> {
    (
        prop_oneof![500u64..5_000, 5_000u64..100_000],
        0u64..40,
        prop_oneof![
            (2u32..60).prop_map(|q| format!("{q}pkt")),
            (3u32..60).prop_map(|q| format!("{}B", q * 1000)),
        ],
        prop_oneof![
            3 => Just(String::new()),
            1 => (1u32..50).prop_map(|p| format!("loss = {{ model = \"bernoulli\", p = {} }}", p as f64 / 1000.0)),
            1 => Just("loss = { model = \"gilbert_elliott\", p_good_bad = 0.01, p_bad_good = 0.3, loss_good = 0.0, loss_bad = 0.6 }".to_string()),
        ],
        prop_oneof![
            3 => Just(String::new()),
            1 => (1u64..5000, 1u64..2000).prop_map(|(s, d)| format!("outages = [{{ start = \"{s}ms\", duration = \"{d}ms\" }}]")),
            1 => (1u64..5000, 100u64..20_000, 0u64..60, 1u32..40).prop_map(|(t, r, d, q)| format!(
                "schedule = [{{ at = \"{t}ms\", rate = \"{r}kbit/s\", delay = \"{d}ms\" }}, {{ at = \"{}ms\", direction = \"forward\", queue = \"{q}pkt\", loss = {{ model = \"bernoulli\", p = 0.01 }} }}]", t + 700)),
            1 => (1u64..5000, 0u64..1500, 100u64..20_000, 0u64..80).prop_map(|(t, o, r, d)| format!(
                "handovers = [{{ at = \"{t}ms\", outage = \"{o}ms\", rate = \"{r}kbit/s\", delay = \"{d}ms\" }}]")),
            1 => (0u64..1500, 100u64..20_000).prop_map(|(o, r)| format!(
                "handovers = [{{ at = \"steady\", outage = \"{o}ms\", rate = \"{r}kbit/s\", steady = {{ earliest = \"1s\", window = \"500ms\", fraction = 0.5, latest = \"4s\" }} }}]")),
        ],
    )
        .prop_map(|(rate_kbps, delay_ms, queue, loss, extra)| Link {
            rate_kbps,
            delay_ms,
            queue,
            loss,
            extra,
        })
}

#[derive(Clone, Debug)]
struct Flow {
    cc: usize,
    sack: bool,
    delack: bool,
    start_ms: u64,
    stop: Option<u64>,
    size: Option<u64>,
    log: bool,
    from_second: bool,
}

fn flow() -> impl Strategy<Value = Flow> {
    (
        0..ALGORITHMS.len(),
        any::<bool>(),
        any::<bool>(),
        0u64..2000,
        prop::option::weighted(0.2, 2000u64..6000),
        prop::option::weighted(0.3, 10_000u64..2_000_000),
        prop::bool::weighted(0.3),
        any::<bool>(),
    )
        .prop_map(
            |(cc, sack, delack, start_ms, stop, size, log, from_second)| Flow {
                cc,
                sack,
                delack,
                start_ms,
                stop,
                size,
                log,
                from_second,
            },
        )
}

fn scenario(dumbbell: bool, links: &[Link], flows: &[Flow], seed: u64, interval: u64) -> String {
    let mut t =
        format!("duration = \"6s\"\nseed = {seed}\n[output]\ninterval = \"{interval}ms\"\n");
    // chain: n0 - n1 - ... ; dumbbell: a -> r, b -> r, r - s, s -> c
    let ends: Vec<(String, String)> = if dumbbell {
        vec![
            ("a".into(), "r".into()),
            ("b".into(), "r".into()),
            ("r".into(), "s".into()),
            ("s".into(), "c".into()),
        ]
    } else {
        (0..links.len())
            .map(|i| (format!("n{i}"), format!("n{}", i + 1)))
            .collect()
    };
    for (l, (a, b)) in links.iter().zip(&ends) {
        t += &format!(
            "[[links]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"{}kbit/s\"\ndelay = \"{}ms\"\nqueue = \"{}\"\n{}\n{}\n",
            l.rate_kbps, l.delay_ms, l.queue, l.loss, l.extra
        );
    }
    let last = if dumbbell {
        "c".to_string()
    } else {
        format!("n{}", links.len())
    };
    for f in flows {
        let from = match (dumbbell, f.from_second) {
            (true, true) => "b".to_string(),
            (true, false) => "a".to_string(),
            (false, true) if links.len() > 1 => "n1".to_string(),
            _ => "n0".to_string(),
        };
        t += &format!(
            "[[flows]]\nfrom = \"{from}\"\nto = \"{last}\"\ncc = \"{}\"\nstart = \"{}ms\"\nlog_packets = {}\ntcp = {{ sack = {}, delayed_ack = {}, mss = 1000 }}\n",
            ALGORITHMS[f.cc],
            f.start_ms,
            f.log,
            f.sack,
            if f.delack { "\"200ms\"" } else { "false" },
        );
        if let Some(s) = f.stop {
            t += &format!("stop = \"{s}ms\"\n");
        }
        if let Some(n) = f.size {
            t += &format!("size = \"{n}B\"\n");
        }
    }
    t
}

/// Runs both modes, pausing at the same instants, and compares the results
/// at every pause.
fn compare(text: &str, pauses: &[u64]) -> Result<(), TestCaseError> {
    if let Some(path) = std::env::var_os("WAVELAB_ENGINES_DUMP") {
        std::fs::write(path, text).expect("dump the case");
    }
    let sc = match Scenario::from_toml_str(text) {
        Ok(sc) => sc,
        Err(e) => return Err(TestCaseError::reject(e.to_string())),
    };
    let mut fast = Simulation::new(sc.clone()).unwrap();
    // syncs (the network's counters brought to the clock, what it passed
    // forgotten) after every few events, between simultaneous ones too:
    // when they happen must change nothing
    fast.set_sync_period(1 + text.len() as u64 % 7);
    let mut reference = Simulation::new_reference(sc).unwrap();
    for &p in pauses {
        let t = Instant::from_nanos(p * 1_000_000);
        fast.run_until(t);
        reference.run_until(t);
        let (a, b) = (fast.results(), reference.results());
        for (name, x, y) in [
            ("series", &a.series, &b.series),
            ("queues", &a.queues, &b.queues),
            ("flows", &a.flows, &b.flows),
            ("links", &a.links, &b.links),
            ("packets", &a.packets, &b.packets),
            ("handovers", &a.handovers, &b.handovers),
            ("handoffs", &a.handoffs, &b.handoffs),
            ("notifications", &a.notifications, &b.notifications),
        ] {
            // digests compare floats by their bits (NaN == NaN)
            if x.digest() != y.digest() {
                let detail = x
                    .columns
                    .iter()
                    .zip(&y.columns)
                    .find(|(c, d)| format!("{:?}", c.data) != format!("{:?}", d.data))
                    .map(|(c, d)| {
                        let (u, v) = (format!("{:?}", c.data), format!("{:?}", d.data));
                        let at = u
                            .bytes()
                            .zip(v.bytes())
                            .position(|(p, q)| p != q)
                            .unwrap_or(0);
                        let lo = at.saturating_sub(300);
                        format!(
                            "column {} ({} vs {} rows), from char {lo}:\n{}\nvs\n{}",
                            c.name,
                            c.data.len(),
                            d.data.len(),
                            &u[lo..(at + 300).min(u.len())],
                            &v[lo..(at + 300).min(v.len())]
                        )
                    })
                    .unwrap_or_else(|| format!("rows {} vs {}", x.rows(), y.rows()));
                let cut: String = detail.chars().take(4000).collect();
                return Err(TestCaseError::fail(format!(
                    "{name} differ at {p} ms:\n{cut}\n--- scenario ---\n{text}"
                )));
            }
        }
        prop_assert_eq!(a.run.packet_hops, b.run.packet_hops);
    }
    Ok(())
}

/// The instants (ms) to pause at, in order, ending at the run's end.
fn pause_points(mut pauses: Vec<u64>) -> Vec<u64> {
    pauses.sort();
    pauses.push(6000);
    pauses
}

/// One handoff of the mobile node: (ms after the previous one, kind,
/// disconnection ms, held delivered, notification delay ms).
type HandoffGen = (u64, bool, u64, bool, Option<u64>);

fn handoff() -> impl Strategy<Value = HandoffGen> {
    (
        100u64..2500,
        any::<bool>(),
        0u64..1500,
        prop::bool::weighted(0.3),
        prop::option::weighted(0.5, 0u64..200),
    )
}

/// A server behind a router, two base stations, and a mobile node on two
/// access links (`links[0]` and `links[1]` of the strategy); flows between
/// the server (or a second server, on the router) and the mobile node, either
/// way; handoffs back and forth between the access links.
fn multihomed(
    access: &[Link],
    flows: &[Flow],
    handoffs: &[HandoffGen],
    seed: u64,
    interval: u64,
) -> String {
    let mut t = format!(
        "duration = \"6s\"\nseed = {seed}\n[output]\ninterval = \"{interval}ms\"\nnotification_samples = {}\n",
        seed % 2 == 0
    );
    for (a, b) in [
        ("server", "router"),
        ("router", "bs1"),
        ("router", "bs2"),
        ("other", "router"),
    ] {
        t += &format!(
            "[[links]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"100Mbit/s\"\ndelay = \"2ms\"\n"
        );
    }
    for (i, l) in access.iter().enumerate() {
        t += &format!(
            "[[links]]\nname = \"access{i}\"\nbetween = [\"bs{}\", \"mobile\"]\nrate = \"{}kbit/s\"\ndelay = \"{}ms\"\nqueue = \"{}\"\n{}\n",
            i + 1,
            l.rate_kbps,
            l.delay_ms,
            l.queue,
            l.loss,
        );
    }
    for f in flows {
        let far = if f.from_second { "other" } else { "server" };
        let (from, to) = if f.delack {
            (far, "mobile")
        } else {
            ("mobile", far)
        };
        t += &format!(
            "[[flows]]\nfrom = \"{from}\"\nto = \"{to}\"\ncc = \"{}\"\nstart = \"{}ms\"\nlog_packets = {}\ntcp = {{ sack = {}, mss = 1000 }}\n",
            ALGORITHMS[f.cc], f.start_ms, f.log, f.sack,
        );
        if let Some(n) = f.size {
            t += &format!("size = \"{n}B\"\n");
        }
    }
    let mut at = 0;
    for (k, &(gap, bbm, disc, delivered, notify)) in handoffs.iter().enumerate() {
        at += gap;
        if at >= 6000 {
            break;
        }
        let (from, to) = if k % 2 == 0 { (0, 1) } else { (1, 0) };
        t += &format!(
            "[[handoffs]]\nnode = \"mobile\"\nat = \"{at}ms\"\nfrom = \"access{from}\"\nto = \"access{to}\"\n"
        );
        if bbm {
            t += &format!(
                "kind = \"break-before-make\"\ndisconnection = \"{disc}ms\"\nheld = \"{}\"\n",
                if delivered { "delivered" } else { "lost" }
            );
        } else {
            t += "kind = \"make-before-break\"\n";
        }
        if let Some(d) = notify {
            t += &format!("notify = {{ delay = \"{d}ms\" }}\n");
        }
    }
    t
}

proptest! {
    // WAVELAB_ENGINE_CASES=5000 for a longer search
    #![proptest_config(ProptestConfig {
        cases: wavelab_tcp::testing::cases("WAVELAB_ENGINE_CASES", 96),
        max_global_rejects: 2000,
        .. ProptestConfig::default()
    })]

    #[test]
    fn chains_match_the_reference(
        links in prop::collection::vec(link(), 1..4),
        flows in prop::collection::vec(flow(), 1..4),
        seed in 0u64..1000,
        interval in 20u64..300,
        pauses in prop::collection::vec(1u64..6000, 0..3),
    ) {
        compare(&scenario(false, &links, &flows, seed, interval), &pause_points(pauses))?;
    }

    #[test]
    fn handoffs_match_the_reference(
        access in prop::collection::vec(link(), 2..=2),
        flows in prop::collection::vec(flow(), 1..4),
        handoffs in prop::collection::vec(handoff(), 1..4),
        seed in 0u64..1000,
        interval in 20u64..300,
        pauses in prop::collection::vec(1u64..6000, 0..3),
    ) {
        compare(&multihomed(&access, &flows, &handoffs, seed, interval), &pause_points(pauses))?;
    }

    #[test]
    fn dumbbells_match_the_reference(
        links in prop::collection::vec(link(), 4..=4),
        flows in prop::collection::vec(flow(), 1..5),
        seed in 0u64..1000,
        interval in 20u64..300,
        pauses in prop::collection::vec(1u64..6000, 0..3),
    ) {
        compare(&scenario(true, &links, &flows, seed, interval), &pause_points(pauses))?;
    }
}
