//! Forking a simulation at an instant: a fork that moves a node handoff to
//! an instant after the fork gives, bit for bit, the run a fresh simulation
//! of the scenario with the handoff there gives (the digests of every
//! table), and the simulation it was forked from is unchanged by it.

use crate::common;

use proptest::prelude::*;
use wavelab_sim::{Results, Scenario, Simulation};
use wavelab_tcp::{Duration, Instant};

/// A handoff of the mobile node between two access links, at `at_ms`.
#[derive(Clone, Debug)]
struct Case {
    old: (u64, u64),
    new: (u64, u64),
    queues: (u64, u64),
    cc: &'static str,
    count: u32,
    bbm: Option<u64>,
    notify_ms: Option<u64>,
    transfer: Option<(u64, bool)>,
    log: bool,
}

impl Case {
    fn text(&self, at_ms: u64) -> String {
        let links = common::mobiwac_links(self.old, self.new, Some(self.queues));
        let kind = match self.bbm {
            Some(d) => format!("kind = \"break-before-make\"\ndisconnection = \"{d}ms\""),
            None => "kind = \"make-before-break\"".to_string(),
        };
        let notify = self.notify_ms.map_or(String::new(), |d| {
            format!("notify = {{ delay = \"{d}ms\" }}")
        });
        let transfer = self.transfer.map_or(String::new(), |(p, stop)| {
            format!("transfer = {{ packets = {p}, stop = {stop} }}")
        });
        format!(
            r#"
            duration = "12s"
            seed = 7
            [output]
            interval = "250ms"
            queues = true
            {links}
            [[flows]]
            from = "server"
            to = "mobile"
            cc = "{cc}"
            count = {count}
            log_packets = {log}
            tcp = {{ min_rto = "200ms", delayed_ack = false }}
            [[handoffs]]
            node = "mobile"
            at = "{at_ms}ms"
            from = "old"
            to = "new"
            {kind}
            {notify}
            {transfer}
            "#,
            cc = self.cc,
            count = self.count,
            log = self.log,
        )
    }

    fn scenario(&self, at_ms: u64) -> Scenario {
        Scenario::from_toml_str(&self.text(at_ms)).expect("valid scenario")
    }
}

fn case() -> impl Strategy<Value = Case> {
    let link = (100u64..4_000, 2u64..300);
    (
        (link.clone(), link, (5u64..40, 5u64..40)),
        prop::sample::select(vec!["newreno", "etcpv0", "etcpv1", "cubic", "wave", "bbr"]),
        1u32..4,
        prop::option::of(100u64..1500),
        prop::option::of(0u64..800),
        prop::option::of((20u64..300, any::<bool>())),
        any::<bool>(),
    )
        .prop_map(
            |((old, new, queues), cc, count, bbm, notify_ms, transfer, log)| Case {
                old,
                new,
                queues,
                cc,
                count,
                bbm,
                notify_ms,
                transfer,
                log,
            },
        )
}

fn fresh(sc: Scenario) -> Results {
    let mut sim = Simulation::new(sc).expect("builds");
    sim.run();
    sim.results()
}

fn ms(t: u64) -> Duration {
    Duration::from_millis(t)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: wavelab_tcp::testing::cases("WAVELAB_FORK_CASES", 64),
        .. ProptestConfig::default()
    })]

    /// Run the scenario with its handoff at `prefix_ms` up to `fork_ms`,
    /// fork, move the fork's handoff to `at_ms` (both after the fork): the
    /// fork's tables are a fresh run's with the handoff at `at_ms`, and the
    /// original continues as a fresh run with its own.
    #[test]
    fn a_fork_with_a_moved_handoff_is_a_fresh_run(
        c in case(),
        fork_ms in 1u64..6_000,
        prefix_after in 1u64..5_000,
        at_after in 1u64..5_000,
    ) {
        let prefix_ms = fork_ms + prefix_after;
        let at_ms = fork_ms + at_after;
        let mut base = Simulation::new_forkable(c.scenario(prefix_ms)).expect("builds");
        base.run_until(Instant::ZERO + ms(fork_ms));
        let mut fork = base.fork().expect("built-in algorithms fork");
        fork.set_handoff_at(0, ms(at_ms)).expect("both instants after the fork");
        fork.run();
        base.run();
        let want = fresh(c.scenario(at_ms));
        let got = fork.results();
        prop_assert_eq!(got.digest(), want.digest(), "fork moved to {} ms", at_ms);
        prop_assert_eq!(base.results().digest(), fresh(c.scenario(prefix_ms)).digest());
    }
}

/// One NewReno flow from a 2 Mbit/s, 50 ms link to a 500 kbit/s, 100 ms one.
fn small(bbm: Option<u64>) -> Case {
    Case {
        old: (2_000, 50),
        new: (500, 100),
        queues: (10, 10),
        cc: "newreno",
        count: 1,
        bbm,
        notify_ms: None,
        transfer: None,
        log: false,
    }
}

/// A handoff cannot move from or to an instant the fork has reached, and a
/// link in virtual time cannot take new outage windows: named errors.
#[test]
fn moves_a_fork_cannot_make_are_named_errors() {
    let c = small(Some(1000));
    let mut sim = Simulation::new_forkable(c.scenario(5_000)).unwrap();
    sim.run_until(Instant::ZERO + ms(3_000));
    let mut f = sim.fork().unwrap();
    let e = f.set_handoff_at(0, ms(2_000)).unwrap_err();
    assert!(e.starts_with("handoffs[0].at: a fork at 3 s"), "{e}");
    let e = f.set_handoff_at(1, ms(4_000)).unwrap_err();
    assert!(e.contains("has 1 handoffs"), "{e}");
    let mut plain = Simulation::new(c.scenario(5_000)).unwrap();
    plain.run_until(Instant::ZERO + ms(3_000));
    let e = plain.set_handoff_at(0, ms(4_000)).unwrap_err();
    assert!(
        e.contains("links[3] runs in virtual time") && e.contains("new_forkable"),
        "{e}"
    );
}

/// Forking a simulation that runs a user algorithm without `clone_box`
/// names the flow and the algorithm.
#[test]
fn an_algorithm_that_cannot_be_copied_is_named() {
    use wavelab_tcp::cc::{AckEvent, CongestionControl, CongestionEvent};
    #[derive(Debug)]
    struct Fixed;
    impl CongestionControl for Fixed {
        fn name(&self) -> &'static str {
            "fixed-window"
        }
        fn cwnd(&self) -> u64 {
            10_000
        }
        fn ssthresh(&self) -> u64 {
            u64::MAX
        }
        fn on_ack(&mut self, _: Instant, _: &AckEvent) {}
        fn on_congestion(&mut self, _: Instant, _: &CongestionEvent) {}
    }
    let c = small(None);
    let mut sim = Simulation::new_forkable(c.scenario(5_000)).unwrap();
    sim.set_algorithm(0, wavelab_tcp::Cc::Custom(Box::new(Fixed)))
        .unwrap();
    sim.run_until(Instant::ZERO + ms(1_000));
    let e = sim.fork().unwrap_err();
    assert!(
        e.contains("\"fixed-window\"") && e.contains("clone_box"),
        "{e}"
    );
}
