//! FlowMonitor-style statistics of a flow's data packets at the network
//! (the flows table's `packets_*`, `wire_bytes_*`, `owd_*` and `jitter`):
//! what they must equal on paths whose delays and drops are known.

use crate::common;
use wavelab_sim::Results;

fn one_link(queue: &str, flow: &str) -> String {
    format!(
        r#"
        duration = "10s"
        [[links]]
        between = ["s", "r"]
        rate = "10Mbit/s"
        delay = "20ms"
        queue = "{queue}"
        [[flows]]
        from = "s"
        to = "r"
        {flow}
        "#
    )
}

fn count(r: &Results, name: &str) -> u64 {
    r.flows.options::<u64>(name)[0].unwrap()
}

fn secs(r: &Results, name: &str) -> f64 {
    r.flows.options::<f64>(name)[0].unwrap()
}

#[test]
fn a_short_transfer_on_an_idle_link_loses_nothing_and_waits_little() {
    let r = common::run(&one_link("1000pkt", "size = \"30kB\""));
    assert_eq!(count(&r, "packets_lost"), 0);
    assert_eq!(count(&r, "packets_received"), count(&r, "packets_sent"));
    assert_eq!(
        count(&r, "wire_bytes_received"),
        count(&r, "wire_bytes_sent")
    );
    // 20 ms of propagation and at most one full-sized packet's
    // serialisation (1,500 B at 10 Mbit/s = 1.2 ms), plus the wait behind
    // the packets of the same window sent back to back
    let p50 = secs(&r, "owd_p50");
    assert!(p50 >= 0.020 * (1.0 - 1.0 / 128.0), "{p50}");
    assert!(secs(&r, "owd_mean") >= 0.020, "{}", secs(&r, "owd_mean"));
    assert!(secs(&r, "owd_p99") < 0.040, "{}", secs(&r, "owd_p99"));
}

#[test]
fn drops_at_a_drop_tail_bottleneck_are_the_flows_network_loss() {
    let r = common::run(&one_link("20pkt", "cc = \"cubic\""));
    let lost = count(&r, "packets_lost");
    // direction 0 carries the data; the ACK direction drops nothing here
    let link_drops = r.links.u64s("dropped_queue")[0];
    assert!(lost > 0, "a 20-packet queue overflows under CUBIC");
    assert_eq!(lost, link_drops);
    assert_eq!(r.links.u64s("dropped_queue")[1], 0);
    // what is neither received nor lost is still in flight at the end
    let (sent, received) = (count(&r, "packets_sent"), count(&r, "packets_received"));
    assert!(received + lost <= sent);
    assert!(sent - received - lost < 200, "{sent} {received} {lost}");
    // the network loss counts drops, the sender's retransmissions also
    // count its spurious ones and tail-loss probes
    let retx = r.flows.u64s("retransmissions")[0];
    assert!(retx >= lost / 2, "{retx} retransmissions for {lost} drops");
}

#[test]
fn one_way_delay_is_propagation_serialisation_and_queueing() {
    // a bloated drop-tail buffer: the one-way delay of the data is the
    // 20 ms propagation, 1.2 ms serialisation and the queue's mean delay
    let r = common::run(&one_link("1000pkt", "cc = \"cubic\""));
    let owd = secs(&r, "owd_mean");
    let queue = r.links.f64s("queue_delay_mean")[0];
    let expect = 0.020 + 1500.0 * 8.0 / 10e6 + queue;
    eprintln!("owd {owd:.4} s, queue {queue:.4} s, expected {expect:.4} s");
    assert!(queue > 0.05, "the buffer bloats ({queue} s)");
    assert!((owd - expect).abs() < 0.02 * expect, "{owd} vs {expect}");
    assert!(secs(&r, "jitter") > 0.0);
}

#[test]
fn both_engine_modes_agree_on_the_statistics() {
    let (a, b) = common::run_both(&one_link("20pkt", "cc = \"cubic\""));
    for name in ["packets_sent", "packets_received", "packets_lost"] {
        assert_eq!(count(&a, name), count(&b, name), "{name}");
    }
    for name in ["owd_mean", "owd_p99", "jitter"] {
        assert_eq!(secs(&a, name).to_bits(), secs(&b, name).to_bits(), "{name}");
    }
}
