//! Multipath TCP (RFC 8684) in the simulator: a server and a mobile node
//! reachable over two access links (MobiWac 2009's topology,
//! [`common::mobiwac_links`]), one MPTCP flow with a subflow per access
//! link. What RFC 8684 and RFC 6356 promise, each a test that can fail.

use crate::common;
use wavelab_sim::Results;

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
