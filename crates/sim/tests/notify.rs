//! Cross-layer notifications: a handoff tells the senders of the flows it
//! moves, after the configured delay, what they need (MobiWac 2009): the
//! kind of handoff, the old and new access link's rate and delay, the
//! number of flows on the new link. A test algorithm records what it hears
//! and reacts by setting its window to the new link's BDP shared by the
//! flows, as ETCPv1 does.

use std::sync::{Arc, Mutex};
use wavelab_sim::{Scenario, Simulation};
use wavelab_tcp::cc::{
    AckEvent, CongestionEvent, HandoffStyle, LinkReport, Notification, PathInfo,
};
use wavelab_tcp::{Cc, CongestionControl, Duration, Instant, Rate, SeqNum};

/// What the algorithm of each flow heard: (flow, when, what).
type Heard = Arc<Mutex<Vec<(usize, Instant, Notification)>>>;

/// A fixed window (20 segments; halved at a loss), reset at a handoff
/// notice to max(2, BDP_new / N) segments, BDP_new = rate x 2 x delay of the
/// new access link.
#[derive(Debug)]
struct Listener {
    flow: usize,
    mss: u64,
    cwnd: u64,
    heard: Heard,
}

impl CongestionControl for Listener {
    fn name(&self) -> &'static str {
        "listener"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn set_mss(&mut self, mss: u32) {
        self.mss = mss as u64;
    }
    fn on_ack(&mut self, _: Instant, _: &AckEvent) {}
    fn on_congestion(&mut self, _: Instant, _: &CongestionEvent) {
        self.cwnd = (self.cwnd / 2).max(2 * self.mss);
    }
    fn on_notification(&mut self, now: Instant, n: &Notification) {
        self.heard.lock().unwrap().push((self.flow, now, *n));
        if let Notification::Handoff(h) = n {
            let (rate, delay) = (h.new.rate.unwrap(), h.new.delay.unwrap());
            let bdp = rate.as_bps() * 2 * delay.as_nanos() / 8 / 1_000_000_000;
            self.cwnd = (bdp / h.flows as u64).max(2 * self.mss);
        }
    }
}

/// MobiWac 2009's topology, three flows from the server to the mobile node
/// (the third starting after the handoff), a handoff at 5 s from a
/// 54 Mbit/s / 2 ms link to a 6 Mbit/s / 50 ms one, notified after 30 ms.
fn scenario(kind: &str) -> String {
    format!(
        r#"
        duration = "8s"
        [output]
        notification_samples = true
        [[links]]
        between = ["server", "router"]
        rate = "100Mbit/s"
        delay = "2ms"
        [[links]]
        between = ["router", "bs1"]
        rate = "100Mbit/s"
        delay = "2ms"
        [[links]]
        between = ["router", "bs2"]
        rate = "100Mbit/s"
        delay = "2ms"
        [[links]]
        name = "wlan"
        between = ["bs1", "mobile"]
        rate = "54Mbit/s"
        delay = "2ms"
        queue = "50pkt"
        [[links]]
        name = "hsdpa"
        between = ["bs2", "mobile"]
        rate = "6Mbit/s"
        delay = "50ms"
        queue = "38pkt"
        [[flows]]
        name = "bulk"
        from = "server"
        to = "mobile"
        count = 2
        log_packets = true
        [[flows]]
        name = "late"
        from = "server"
        to = "mobile"
        start = "6s"
        [[handoffs]]
        node = "mobile"
        at = "5s"
        from = "wlan"
        to = "hsdpa"
        {kind}
        notify = {{ delay = "30ms" }}
        "#
    )
}

const BBM: &str = "kind = \"break-before-make\"\ndisconnection = \"1s\"";

/// Builds the simulation (virtual time or reference) with the listener on
/// every flow.
fn build(text: &str, reference: bool) -> (Simulation, Heard) {
    let sc = Scenario::from_toml_str(text).unwrap();
    let mut sim = if reference {
        Simulation::new_reference(sc)
    } else {
        Simulation::new(sc)
    }
    .unwrap();
    let heard = Heard::default();
    for flow in 0..sim.flow_count() {
        let l = Listener {
            flow,
            mss: 1460,
            cwnd: 20 * 1460,
            heard: heard.clone(),
        };
        sim.set_algorithm(flow, Cc::Custom(Box::new(l))).unwrap();
    }
    (sim, heard)
}

#[test]
fn a_handoff_notice_reaches_the_senders_after_its_delay_in_both_modes() {
    for kind in ["kind = \"make-before-break\"", BBM] {
        let text = scenario(kind);
        let (mut fast, heard_fast) = build(&text, false);
        let (mut slow, heard_slow) = build(&text, true);
        fast.run();
        slow.run();
        let heard = heard_fast.lock().unwrap().clone();
        assert_eq!(heard, *heard_slow.lock().unwrap(), "{kind}");
        assert_eq!(fast.results().digest(), slow.results().digest(), "{kind}");
        // the two flows it moved, at 5 s + 30 ms; not the one that had not
        // started
        let at = Instant::from_nanos(5_030_000_000);
        assert_eq!(heard.len(), 2, "{heard:?}");
        for (i, (flow, when, n)) in heard.iter().enumerate() {
            assert_eq!((*flow, *when), (i, at));
            let Notification::Handoff(h) = n else {
                panic!("{n:?}")
            };
            assert_eq!(
                h.old,
                PathInfo {
                    rate: Some(Rate::from_mbps(54)),
                    delay: Some(Duration::from_millis(2)),
                }
            );
            assert_eq!(
                h.new,
                PathInfo {
                    rate: Some(Rate::from_mbps(6)),
                    delay: Some(Duration::from_millis(50)),
                }
            );
            assert_eq!(h.flows, 2, "two flows on the new link");
            let style = if kind == BBM {
                HandoffStyle::BreakBeforeMake {
                    disconnection: Duration::from_secs(1),
                }
            } else {
                HandoffStyle::MakeBeforeBreak
            };
            assert_eq!(h.style, style);
        }
        // the tables: the handoff notified two senders; each notification
        // has a row, and a row in the packet log of the logged flows
        let r = fast.results();
        assert_eq!(r.handoffs.col::<u32>("notified"), [2]);
        assert_eq!(r.handoffs.f64s("notify_delay"), [0.03]);
        let n = &r.notifications;
        assert_eq!(n.f64s("time"), [5.03, 5.03]);
        assert_eq!(n.f64s("sent"), [5.0, 5.0]);
        assert_eq!(n.col::<u32>("flow"), [0, 1]);
        assert_eq!(n.labels("kind"), ["handoff", "handoff"]);
        assert_eq!(n.f64s("new_rate"), [6e6, 6e6]);
        assert_eq!(n.f64s("old_delay"), [0.002, 0.002]);
        assert_eq!(n.col::<u32>("flows"), [2, 2]);
        let log = &r.packets;
        let rows: Vec<usize> = (0..log.rows())
            .filter(|&i| log.labels("event")[i] == "notify")
            .collect();
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|&i| log.f64s("time")[i] == 5.03));
        // the new link's forward direction (link 4, direction 8)
        assert!(rows.iter().all(|&i| log.col::<i64>("link")[i] == 8));
    }
}

#[test]
fn an_algorithm_that_reacts_changes_the_flow() {
    let text = scenario("kind = \"make-before-break\"");
    let (mut sim, _) = build(&text, false);
    sim.run();
    let r = sim.results();
    // the row the notification adds to the series: BDP_new / N = 6 Mbit/s x
    // 100 ms / 8 / 2 = 37,500 bytes, from 20 x 1460
    let (t, flow, cwnd) = (
        r.series.f64s("time"),
        r.series.col::<u32>("flow"),
        r.series.f64s("cwnd"),
    );
    let row = |at: f64, f: u32| {
        (0..t.len())
            .find(|&i| (t[i] - at).abs() < 1e-12 && flow[i] == f)
            .map(|i| cwnd[i])
    };
    for f in [0, 1] {
        assert_eq!(row(5.0, f), Some(29_200.0));
        assert_eq!(row(5.03, f), Some(37_500.0));
    }
    assert_eq!(row(5.03, 2), None, "the late flow was not notified");
    // without the notification the windows stay where they were
    let quiet = text.replace("notify = { delay = \"30ms\" }", "");
    let (mut sim, heard) = build(&quiet, false);
    sim.run();
    assert!(heard.lock().unwrap().is_empty());
    let r = sim.results();
    assert_eq!(r.notifications.rows(), 0);
    let cw = r.series.f64s("cwnd");
    let last0 = (0..cw.len())
        .rev()
        .find(|&i| r.series.col::<u32>("flow")[i] == 0)
        .unwrap();
    assert!(cw[last0] < 37_500.0, "{}", cw[last0]);
}

/// A link-layer report scheduled by a driver reaches the algorithm at its
/// instant with its segment's stream offset, in both modes.
#[test]
fn a_link_report_reaches_the_sender() {
    let text =
        scenario("kind = \"make-before-break\"").replace("notify = { delay = \"30ms\" }", "");
    let mut seen = vec![];
    for reference in [false, true] {
        let (mut sim, heard) = build(&text, reference);
        sim.run_until(Instant::from_nanos(2_000_000_000));
        let at = Instant::from_nanos(2_010_000_000);
        // the wire sequence number of the sender's 1001st segment
        let seq = sim_seq(&sim, 0, 1000 * 1460);
        let report = LinkReport {
            seq,
            offset: 0,
            retries: 2,
            link_rto: Duration::from_millis(5),
        };
        sim.schedule_notification(0, 6, at, Notification::LinkReport(report))
            .unwrap();
        assert!(sim
            .schedule_notification(0, 6, Instant::ZERO, Notification::LinkReport(report))
            .unwrap_err()
            .contains("before now"));
        sim.run();
        let heard = heard.lock().unwrap().clone();
        assert_eq!(heard.len(), 1);
        let (flow, when, Notification::LinkReport(r)) = heard[0] else {
            panic!("{heard:?}")
        };
        assert_eq!((flow, when, r.offset, r.retries), (0, at, 1000 * 1460, 2));
        let t = sim.results().notifications;
        assert_eq!(t.labels("kind"), ["link-report"]);
        assert_eq!(t.col::<u64>("seq"), [1000 * 1460]);
        seen.push(sim.results().digest());
    }
    assert_eq!(seen[0], seen[1]);
}

/// The wire sequence number of stream offset `offset` of flow `f`'s sender:
/// its initial sequence number plus one, plus the offset.
fn sim_seq(sim: &Simulation, f: usize, offset: u64) -> SeqNum {
    SeqNum::from_offset(sim.sender(f).initial_seq() + 1, offset)
}
