//! Multipath TCP (RFC 8684) in the simulator: a server and a mobile node
//! reachable over two access links (MobiWac 2009's topology,
//! [`common::mobiwac_links`]), one MPTCP flow with a subflow per access
//! link. What RFC 8684 and RFC 6356 promise, each a test that can fail.

use crate::common;
use wavelab_sim::{Results, Scenario, Simulation};
use wavelab_tcp::{Duration, Instant};

/// The two-access-link topology (rates in kbit/s, delays in ms, queues in
/// packets) and the given flows and handoffs, run for `duration`.
fn scenario(duration: &str, old: (u64, u64), new: (u64, u64), rest: &str) -> String {
    let links = common::mobiwac_links(old, new, Some((50, 50)));
    format!("duration = \"{duration}\"\nseed = 7\n{links}\n{rest}")
}

fn run(text: &str) -> Results {
    common::run(text)
}

/// The connection's in-order data bytes (the subflows table's
/// `conn_delivered`, the same on each of its rows).
fn conn_delivered(r: &Results) -> u64 {
    r.subflows.u64s("conn_delivered")[0]
}

/// Column `col` of the subflows table.
fn sub(r: &Results, col: &str) -> Vec<u64> {
    r.subflows.u64s(col).to_vec()
}

#[test]
fn two_subflows_over_two_equal_links_fill_both() {
    let r = run(&scenario(
        "20s",
        (10_000, 10),
        (10_000, 10),
        r#"
        [[flows]]
        name = "mp"
        from = "server"
        to = "mobile"
        mptcp = {}
        "#,
    ));
    assert_eq!(r.subflows.rows(), 2);
    // payload capacity of both links: 1460 of every 1500 bytes
    let sum = 2.0 * 10e6 * 1460.0 / 1500.0;
    let goodput = conn_delivered(&r) as f64 * 8.0 / 20.0;
    eprintln!(
        "goodput {goodput:.0} of {sum:.0}; mapped {:?}",
        sub(&r, "mapped")
    );
    assert!(goodput >= 0.9 * sum, "{goodput} < 90 % of {sum}");
    // each subflow carried at least a third of the data
    let mapped = sub(&r, "mapped");
    assert!(mapped.iter().all(|&m| m * 3 >= mapped.iter().sum::<u64>()));
}

/// Backup mode across a break-before-make handoff from the primary link at
/// `at`: the flow is `mptcp = { paths = "backup", <extra> }`.
fn backup_handoff(extra: &str, size: &str, disconnection: &str) -> String {
    scenario(
        "12s",
        (10_000, 10),
        (10_000, 10),
        &format!(
            r#"
            [[flows]]
            name = "mp"
            from = "server"
            to = "mobile"
            {size}
            mptcp = {{ paths = "backup" {extra} }}
            [[handoffs]]
            node = "mobile"
            at = "4s"
            from = "old"
            to = "new"
            kind = "break-before-make"
            disconnection = "{disconnection}"
            "#
        ),
    )
}

#[test]
fn backup_subflow_is_idle_until_the_primary_fails_then_carries_on_within_one_rto() {
    let sc = Scenario::from_toml_str(&backup_handoff("", "", "0s")).unwrap();
    let mut sim = Simulation::new(sc).unwrap();
    // flows: 0 the primary subflow (old link), 1 the backup (new link)
    sim.run_until(at(3.999));
    assert_eq!(sim.sender(1).stats().bytes_sent, 0, "backup used early");
    assert!(sim.sender(0).stats().bytes_sent > 1_000_000);
    assert_eq!(
        sim.sender(1).state(),
        wavelab_tcp::SenderState::Established,
        "the backup subflow joined"
    );
    // the primary's timer as the link breaks
    let rto = sim.sender(0).rtt().rto().as_secs_f64();
    let rtt = 2.0 * (0.002 + 0.002 + 0.010) + 0.010;
    sim.run_until(at(4.0 + rto + rtt));
    let carried = sim.sender(1).bytes_acked();
    eprintln!("rto {rto:.3} s; backup acknowledged {carried} B by 4 s + RTO + RTT");
    assert!(carried > 0, "nothing on the backup within one RTO");
    sim.run();
    let r = sim.results();
    let mapped = sub(&r, "mapped");
    assert!(mapped[1] > 5_000_000, "the backup carried {} B", mapped[1]);
    assert!(sub(&r, "failures")[0] >= 1);
}

#[test]
fn break_before_make_outage_is_survived_with_the_data_reinjected() {
    let size = 12_000_000u64;
    let r = run(&backup_handoff("", &format!("size = \"{size}B\""), "500ms"));
    let done = r.subflows.f64s("conn_completion_time")[0];
    eprintln!(
        "completed in {done:.3} s; reinjected {:?}; mapped {:?}",
        sub(&r, "reinjected"),
        sub(&r, "mapped")
    );
    assert!(done.is_finite(), "the connection did not complete");
    assert_eq!(conn_delivered(&r), size);
    // what the primary held when its link broke went out again on the backup
    assert!(sub(&r, "reinjected")[1] > 0);
    assert_eq!(sub(&r, "reinjected")[0], 0);
}

#[test]
fn a_notice_fails_the_primary_over_at_once() {
    // with the handoff's cross-layer notice, the backup takes over before
    // the primary's first timeout
    let text = backup_handoff(r#", failover = "notice""#, "", "0s").replace(
        r#"disconnection = "0s""#,
        "disconnection = \"0s\"\nnotify = { delay = \"5ms\" }",
    );
    let sc = Scenario::from_toml_str(&text).unwrap();
    let mut sim = Simulation::new(sc).unwrap();
    sim.run_until(at(4.1));
    assert_eq!(sim.sender(0).stats().rto_expiries, 0);
    assert!(sim.sender(1).bytes_acked() > 0, "the backup took nothing");
}

/// A shared 10 Mbit/s bottleneck (the wired link) in front of two fast
/// access links: one MPTCP flow against one single-path NewReno flow.
fn shared_bottleneck(coupled: &str) -> (f64, f64) {
    let text = format!(
        r#"
        duration = "40s"
        seed = 3
        [[links]]
        name = "wired"
        between = ["server", "router"]
        rate = "10Mbit/s"
        delay = "5ms"
        queue = "60pkt"
        [[links]]
        name = "a"
        between = ["router", "mobile"]
        rate = "100Mbit/s"
        delay = "10ms"
        [[links]]
        name = "b"
        between = ["router", "mobile"]
        rate = "100Mbit/s"
        delay = "10ms"
        [[flows]]
        name = "mp"
        from = "server"
        to = "mobile"
        cc = "newreno"
        mptcp = {{ coupled = "{coupled}" }}
        [[flows]]
        name = "tcp"
        from = "server"
        to = "mobile"
        cc = "newreno"
        "#
    );
    let r = run(&text);
    let tcp = r
        .flows
        .labels("name")
        .iter()
        .position(|n| *n == "tcp")
        .unwrap();
    let single = r.flows.f64s("goodput")[tcp];
    let multi = r.subflows.f64s("conn_goodput")[0];
    (multi, single)
}

#[test]
fn lia_takes_no_more_than_one_tcp_at_a_shared_bottleneck() {
    let (lia, tcp) = shared_bottleneck("lia");
    let (uncoupled, tcp_u) = shared_bottleneck("uncoupled");
    eprintln!(
        "LIA {:.2} vs TCP {:.2} Mbit/s; uncoupled {:.2} vs TCP {:.2}",
        lia / 1e6,
        tcp / 1e6,
        uncoupled / 1e6,
        tcp_u / 1e6
    );
    // RFC 6356 goal 2: no more than a single-path flow would take
    assert!(lia <= 1.1 * tcp, "LIA {lia} vs TCP {tcp}");
    // without coupling the two subflows take about two shares of three
    assert!(uncoupled > 1.5 * tcp_u, "uncoupled {uncoupled} vs {tcp_u}");
}

#[test]
fn olia_and_balia_take_no_more_than_one_tcp_at_a_shared_bottleneck() {
    // both keep RFC 6356's goal 2 (Khalili et al. 2013 section IV; Peng et
    // al. 2016 section VI)
    for coupled in ["olia", "balia"] {
        let (mp, tcp) = shared_bottleneck(coupled);
        eprintln!("{coupled} {:.2} vs TCP {:.2} Mbit/s", mp / 1e6, tcp / 1e6);
        assert!(mp <= 1.1 * tcp, "{coupled} {mp} vs TCP {tcp}");
        // and the link stays full
        assert!(
            mp + tcp > 0.9 * 10e6 * 1460.0 / 1500.0,
            "{coupled}: {mp} + {tcp}"
        );
    }
}

mod integrity {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

        /// Every byte of a sized transfer arrives in order, exactly once at
        /// the connection level, under random loss on both access links
        /// with unequal delays (the data level reorders), for every
        /// scheduler and coupling.
        #[test]
        fn every_scheduler_delivers_every_byte_in_order(
            seed in 0u64..1000,
            loss_a in 0.0f64..0.03,
            loss_b in 0.0f64..0.03,
            delay_b in 1u64..60,
            scheduler in prop::sample::select(vec!["lowest-rtt", "round-robin", "redundant"]),
            coupled in prop::sample::select(vec!["uncoupled", "lia", "olia", "balia"]),
        ) {
            let size = 400_000u64;
            let text = format!(
                r#"
                duration = "60s"
                seed = {seed}
                [[links]]
                between = ["server", "router"]
                rate = "50Mbit/s"
                delay = "2ms"
                [[links]]
                name = "a"
                between = ["router", "mobile"]
                rate = "8Mbit/s"
                delay = "5ms"
                queue = "30pkt"
                loss = {{ model = "bernoulli", p = {loss_a} }}
                [[links]]
                name = "b"
                between = ["router", "mobile"]
                rate = "5Mbit/s"
                delay = "{delay_b}ms"
                queue = "30pkt"
                loss = {{ model = "bernoulli", p = {loss_b} }}
                [[flows]]
                from = "server"
                to = "mobile"
                size = "{size}B"
                mptcp = {{ scheduler = "{scheduler}", coupled = "{coupled}" }}
                "#
            );
            let r = run(&text);
            prop_assert_eq!(conn_delivered(&r), size);
            prop_assert!(r.subflows.f64s("conn_completion_time")[0].is_finite());
            let mapped: u64 = sub(&r, "mapped").iter().sum();
            prop_assert!(mapped >= size);
        }
    }
}

/// The instant `s` seconds into the run.
fn at(s: f64) -> Instant {
    Instant::ZERO + Duration::from_secs_f64(s)
}
