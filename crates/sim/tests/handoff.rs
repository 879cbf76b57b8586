//! Handoffs of a multi-homed node (MobiWac 2009's topology): a server, an
//! access router, two base stations on 100 Mbit/s / 2 ms links, and a mobile
//! node behind both, on two access links. The flow goes from the server to
//! the mobile node; at the handoff its data and its ACKs switch links.

use crate::common;

use crate::common::run;
use wavelab_sim::{Results, Simulation};

/// The topology with access links `old` and `new` (rate in kbit/s, one-way
/// delay in ms), one flow whose window is capped at 60 kB by the receiver
/// (41 segments: no queue overflows anywhere, so every duplicate ACK comes
/// from reordering), and a handoff from `old` to `new` at 3 s given by
/// `handoff` (the fields after `to`).
fn mobiwac(old: (u64, u64), new: (u64, u64), handoff: &str) -> String {
    let links = common::mobiwac_links(old, new, None);
    format!(
        r#"
        duration = "8s"
        {links}
        [[flows]]
        from = "server"
        to = "mobile"
        log_packets = true
        tcp = {{ rcv_window = "60KB" }}
        [[handoffs]]
        node = "mobile"
        at = "3s"
        from = "old"
        to = "new"
        {handoff}
        "#
    )
}

const MBB: &str = r#"kind = "make-before-break""#;

fn drops(r: &Results) -> u64 {
    [
        "dropped_queue",
        "dropped_random",
        "dropped_outage",
        "dropped_aqm",
    ]
    .iter()
    .map(|c| r.links.u64s(c).iter().sum::<u64>())
    .sum()
}

/// The packet log's rows of one event kind: (time, seq).
fn rows(r: &Results, event: &str) -> Vec<(f64, u64)> {
    let t = r.packets.f64s("time");
    let seq = r.packets.u64s("seq");
    let ev = r.packets.labels("event");
    (0..t.len())
        .filter(|&i| ev[i] == event)
        .map(|i| (t[i], seq[i]))
        .collect()
}

/// Link directions: old access link forward (to the mobile) and reverse,
/// new access link forward and reverse.
const OLD_FWD: usize = 6;
const OLD_REV: usize = 7;
const NEW_FWD: usize = 8;
const NEW_REV: usize = 9;

/// Make-before-break from a slow, long-delay link to a fast, short one:
/// packets sent after the switch overtake those still on the old link, so
/// the receiver sees segments out of order and the sender duplicate ACKs,
/// although no packet is lost anywhere.
#[test]
fn make_before_break_slow_to_fast_reorders_without_loss() {
    let r = run(&mobiwac((2_000, 50), (54_000, 2), MBB));
    assert_eq!(drops(&r), 0, "no packet lost");
    let ooo = r.flows.u64s("out_of_order_segments")[0];
    let dupacks = r.flows.u64s("dupacks_received")[0];
    assert!(ooo > 5, "{ooo} segments out of order");
    assert!(dupacks > 5, "{dupacks} duplicate ACKs");
    // the false fast retransmit regular TCP makes of it
    assert!(r.flows.u64s("fast_retransmits")[0] >= 1);
    assert!(r.flows.u64s("spurious_retransmissions")[0] >= 1);
    // both directions switched: the old link carries nothing sent after
    // the switch, the new one all of it
    let sent = r.links.u64s("sent_packets");
    assert!(sent[NEW_FWD] > 1_000 && sent[NEW_REV] > 500, "{sent:?}");
    let h = &r.handoffs;
    assert_eq!(h.labels("kind"), ["make-before-break"]);
    assert_eq!(h.f64s("time"), [3.0]);
    assert_eq!(h.col::<u32>("flows_moved"), [1]);
}

/// The same handoff the other way: everything sent after the switch takes
/// the slower path, so nothing overtakes anything.
#[test]
fn make_before_break_fast_to_slow_does_not_reorder() {
    let r = run(&mobiwac((54_000, 2), (2_000, 50), MBB));
    assert_eq!(drops(&r), 0, "no packet lost");
    assert_eq!(r.flows.u64s("out_of_order_segments")[0], 0);
    assert_eq!(r.flows.u64s("dupacks_received")[0], 0);
    assert_eq!(r.flows.u64s("retransmissions")[0], 0);
    // data went both ways: before the switch on the old link, after it on
    // the new one
    let sent = r.links.u64s("sent_packets");
    assert!(sent[OLD_FWD] > 500 && sent[NEW_FWD] > 500, "{sent:?}");
}

/// The data packets' one-way delays: for every data segment delivered, the
/// time from its last transmission to its delivery, with the send time.
fn one_way(r: &Results) -> Vec<(f64, f64)> {
    let mut sent = std::collections::BTreeMap::new();
    let mut out = vec![];
    let t = r.packets.f64s("time");
    let seq = r.packets.u64s("seq");
    let ev = r.packets.labels("event");
    for i in 0..t.len() {
        match ev[i] {
            "send" | "retransmit" => {
                sent.insert(seq[i], t[i]);
            }
            "deliver" => {
                if let Some(&s) = sent.get(&seq[i]) {
                    out.push((s, t[i] - s));
                }
            }
            _ => {}
        }
    }
    out
}

/// Break-before-make from a fast link to a slow one with a 1 s
/// disconnection: the old link drops what it holds, nothing arrives during
/// the disconnection, and afterwards packets take the new link's rate and
/// delay.
#[test]
fn break_before_make_disconnects_then_uses_the_new_link() {
    let bbm = r#"kind = "break-before-make"
        disconnection = "1s""#;
    let r = run(&mobiwac((54_000, 2), (2_000, 50), bbm));
    let delivered = rows(&r, "deliver");
    let during: Vec<_> = delivered
        .iter()
        .filter(|(t, _)| (3.0..4.0).contains(t))
        .collect();
    assert!(
        during.is_empty(),
        "delivered during the disconnection: {during:?}"
    );
    assert!(delivered.iter().any(|(t, _)| *t > 4.0), "delivery resumes");
    assert!(
        delivered.iter().filter(|(t, _)| *t < 3.0).count() > 1_000,
        "the old link worked before"
    );
    // what the old link held is lost (its outage), in both directions
    let outage = r.links.u64s("dropped_outage");
    assert!(outage[OLD_FWD] > 0, "{outage:?}");
    assert_eq!(r.handoffs.labels("held"), ["lost"]);
    // after the disconnection: the new path's one-way delay, 2 + 2 + 50 ms
    // of propagation plus the serialisations (1500 bytes: 0.12 ms at
    // 100 Mbit/s twice, 6 ms at 2 Mbit/s)
    let after: Vec<f64> = one_way(&r)
        .into_iter()
        .filter(|(s, _)| *s > 4.0)
        .map(|(_, d)| d)
        .collect();
    let fastest = after.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(
        (fastest - 0.06024).abs() < 1e-6,
        "fastest one-way delay after the handoff {fastest}"
    );
    let before = one_way(&r)
        .into_iter()
        .filter(|(s, _)| *s < 2.9)
        .map(|(_, d)| d)
        .fold(f64::INFINITY, f64::min);
    // the old path: 2 + 2 + 2 ms and 0.12 + 0.12 + 0.22 ms
    assert!((before - 0.006462).abs() < 1e-5, "before {before}");
}

/// With `held = "delivered"` the old link drains what it holds (and what
/// is on its way to it) during the disconnection; nothing is lost to it.
#[test]
fn break_before_make_can_deliver_what_the_old_link_holds() {
    let bbm = r#"kind = "break-before-make"
        disconnection = "1s"
        held = "delivered""#;
    // a slow old link holds a queue at the switch
    let r = run(&mobiwac((2_000, 50), (54_000, 2), bbm));
    let outage = r.links.u64s("dropped_outage");
    assert_eq!(outage[OLD_FWD] + outage[OLD_REV], 0, "{outage:?}");
    let during = rows(&r, "deliver")
        .iter()
        .filter(|(t, _)| (3.0..4.0).contains(t))
        .count();
    assert!(during > 10, "{during} delivered from the old link's queue");
    // the new link was down: what was sent to it in the disconnection died
    assert!(outage[NEW_FWD] > 0 || outage[NEW_REV] > 0, "{outage:?}");
}

/// A handoff and back, and both engine modes agree on all of it.
#[test]
fn there_and_back_in_both_engine_modes() {
    let text = mobiwac((2_000, 50), (54_000, 2), MBB).replace(
        "duration = \"8s\"",
        "duration = \"8s\"\n[[handoffs]]\nnode = \"mobile\"\nat = \"5s\"\nfrom = \"new\"\nto = \"old\"\nkind = \"break-before-make\"\ndisconnection = \"500ms\"",
    );
    let (a, b) = common::run_both(&text);
    assert_eq!(a.digest(), b.digest());
    assert_eq!(a.handoffs.f64s("time"), [5.0, 3.0]);
    assert_eq!(a.handoffs.labels("from"), ["new", "old"]);
    // back on the old link after 5.5 s: it carries data again
    let q = &a.queues;
    let (t, dir, sent) = (q.f64s("time"), q.col::<u32>("dir"), q.u64s("sent_bytes"));
    let at = |when: f64, d: usize| {
        (0..t.len())
            .find(|&i| (t[i] - when).abs() < 1e-9 && dir[i] as usize == d)
            .map(|i| sent[i])
            .unwrap()
    };
    assert_eq!(at(3.5, OLD_FWD), at(5.0, OLD_FWD), "idle while away");
    assert!(at(7.0, OLD_FWD) > at(5.5, OLD_FWD), "used again");
    assert!(at(5.0, NEW_FWD) > at(3.0, NEW_FWD));
    assert_eq!(at(6.0, NEW_FWD), at(8.0, NEW_FWD), "the new link is left");
}

/// What a driver on the wall clock runs: the clock-free model of each
/// direction, with the scenario's changes and the handoffs' outage windows
/// known in advance. Offered packets get the fate the simulation gives them.
#[test]
fn link_models_carry_the_handoffs_windows() {
    use wavelab_sim::link::Outcome;
    use wavelab_tcp::Instant;
    let bbm = r#"kind = "break-before-make"
        disconnection = "1s""#;
    let sc = wavelab_sim::Scenario::from_toml_str(&mobiwac((54_000, 2), (2_000, 50), bbm)).unwrap();
    let mut links = wavelab_sim::link_models(&sc).unwrap();
    assert_eq!(links.len(), 10);
    let ms = |t: u64| Instant::from_nanos(t * 1_000_000);
    // the old access link (54 Mbit/s, 2 ms): fine before the switch, down
    // from it on (what it held is lost)
    let old = &mut links[OLD_FWD];
    let before = old.offer(ms(2_000), 1500).outcome;
    assert!(matches!(before, Outcome::Arrive { at, .. } if at > ms(2_002) && at < ms(2_003)));
    assert!(matches!(
        old.offer(ms(2_999), 1500).outcome,
        Outcome::Outage { .. }
    ));
    assert!(matches!(
        old.offer(ms(5_000), 1500).outcome,
        Outcome::Outage { .. }
    ));
    // the new one (2 Mbit/s, 50 ms): down for the disconnection, then up
    let new = &mut links[NEW_FWD];
    assert!(matches!(
        new.offer(ms(3_500), 1500).outcome,
        Outcome::Outage { .. }
    ));
    // 1500 bytes at 2 Mbit/s: 6 ms, then 50 ms
    assert_eq!(
        new.offer(ms(4_000), 1500).outcome,
        Outcome::Arrive {
            finish: ms(4_006),
            at: ms(4_056)
        }
    );
    new.sync(ms(5_000));
    assert_eq!(new.counters().dropped, [0, 0, 1, 0]);
    assert_eq!(new.counters().delivered_packets, 1);
}

/// The routes and switches a driver on the wall clock applies: the flow's
/// data and ACKs start on the old access link and switch to the new one at
/// the handoff, and the handoffs table of a run that ended before it says
/// it has not happened.
#[test]
fn route_switches_move_both_sides_at_the_handoff() {
    use wavelab_tcp::Instant;
    let sc = wavelab_sim::Scenario::from_toml_str(&mobiwac((54_000, 2), (2_000, 50), MBB)).unwrap();
    let r = wavelab_sim::route_switches(&sc).unwrap();
    // server -> router -> bs1 -> mobile, then -> bs2 -> mobile; ACKs back
    assert_eq!(
        r.routes,
        vec![[
            vec![vec![0, 2, OLD_FWD as u32], vec![0, 4, NEW_FWD as u32]],
            vec![vec![OLD_REV as u32, 3, 1], vec![NEW_REV as u32, 5, 1]]
        ]]
    );
    let at = Instant::from_nanos(3_000_000_000);
    assert_eq!(r.switches, vec![(at, 0, 0, 1), (at, 0, 1, 1)]);
    let until = |end| wavelab_sim::compile::node_handoffs_until(&sc, end);
    assert_eq!(until(Instant::from_nanos(2_999_999_999))[0].time, None);
    let after = until(at);
    assert_eq!(after[0].time, Some(at));
    assert_eq!(after[0].flows_moved, 1);
}

/// A handoff's transfer measurement (MobiWac 2009's metric): the time from
/// the switch until the flow has 100 more segments acknowledged. It is the
/// same whether the run goes on or stops once it is measured (`stop`), the
/// run that stops ends exactly then, a larger count takes longer, and no
/// count of segments is acknowledged faster than the new link carries it.
#[test]
fn a_transfer_measurement_times_the_packets_after_the_switch() {
    let text = |packets: u32, stop: bool| {
        mobiwac(
            (2_000, 50),
            (54_000, 2),
            &format!("{MBB}\ntransfer = {{ packets = {packets}, stop = {stop} }}"),
        )
    };
    let full = run(&text(100, false));
    let took = full.handoffs.f64s("transfer_time")[0];
    assert_eq!(full.handoffs.col::<u32>("transfer_packets"), [100]);
    assert_eq!(full.handoffs.col::<u32>("transfers_done"), [1]);
    // 100 segments of 1500 bytes on the wire at 54 Mbit/s: 22 ms at least
    assert!(took > 0.022 && took < 2.0, "{took}");

    let sc = wavelab_sim::Scenario::from_toml_str(&text(100, true)).unwrap();
    let mut sim = Simulation::new(sc).unwrap();
    sim.run();
    assert!(sim.is_done());
    assert!((sim.now().as_secs_f64() - (3.0 + took)).abs() < 1e-9);
    assert_eq!(sim.stopped(), None, "an early end is not an error");
    let stopped = sim.results();
    assert_eq!(stopped.handoffs.f64s("transfer_time"), [took]);

    let more = run(&text(500, false)).handoffs.f64s("transfer_time")[0];
    assert!(more > took, "{more} vs {took}");
    // more than the run has time for: not measured
    let never = run(&text(100_000, false));
    assert!(never.handoffs.f64s("transfer_time")[0].is_nan());
    assert_eq!(never.handoffs.col::<u32>("transfers_done"), [0]);
}

#[test]
fn a_transfer_of_no_packets_is_a_named_error() {
    let text = mobiwac(
        (2_000, 50),
        (54_000, 2),
        &format!("{MBB}\ntransfer = {{ packets = 0 }}"),
    );
    let e = match wavelab_sim::Scenario::from_toml_str(&text) {
        Err(e) => e.to_string(),
        Ok(sc) => Simulation::new(sc).unwrap_err().to_string(),
    };
    assert!(e.contains("handoffs[0].transfer.packets"), "{e}");
    assert!(e.contains("0 is out of range"), "{e}");
}
