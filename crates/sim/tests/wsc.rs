//! WSC-TCP's best-start window in the simulator: a host that repeats short
//! transfers to the same receiver starts each after the first from the
//! window the earlier ones reached (Srinivasan 2016, section 3.3), so they finish
//! sooner than NewReno's, which slow-start every time; a transfer to a
//! receiver the host never reached falls back to slow start.

use crate::common::{dumbbell, run};

/// Five 300 kB transfers, 5 s apart, from `sender` to `receiver` on the
/// standard dumbbell (10 Mbit/s, 50 ms, BDP buffer), then one to `other`
/// (a second receiver behind the same router).
fn transfers(cc: &str) -> String {
    let mut flows = String::new();
    for k in 0..5 {
        flows.push_str(&format!(
            "[[flows]]\nfrom = \"sender\"\nto = \"receiver\"\ncc = \"{cc}\"\nstart = \"{}s\"\nsize = \"300kB\"\ntcp = {{ sack = false }}\n",
            5 * k
        ));
    }
    flows.push_str(&format!(
        "[[flows]]\nfrom = \"sender\"\nto = \"other\"\ncc = \"{cc}\"\nstart = \"25s\"\nsize = \"300kB\"\ntcp = {{ sack = false }}\n"
    ));
    flows.push_str(
        "[[links]]\nname = \"egress2\"\nbetween = [\"r2\", \"other\"]\nrate = \"100Mbit/s\"\ndelay = \"1ms\"\n",
    );
    dumbbell("87pkt", &flows)
}

fn completion_times(cc: &str) -> Vec<f64> {
    let r = run(&transfers(cc));
    r.flows.f64s("completion_time").to_vec()
}

#[test]
fn repeated_transfers_start_from_the_window_of_the_earlier_ones() {
    let nr = completion_times("newreno");
    let wsc = completion_times("wsc-tcp");
    assert!(
        nr.iter().chain(&wsc).all(|t| t.is_finite()),
        "{nr:?} {wsc:?}"
    );
    // the first transfer has no history: slow start, as NewReno (no link
    // reports, no retries: the RTT and threshold mechanisms are idle)
    assert_eq!(wsc[0], nr[0]);
    // the later ones to the same receiver start from a learned window
    for k in 1..5 {
        assert!(
            wsc[k] < 0.8 * nr[k],
            "transfer {k}: wsc-tcp {:.3} s, newreno {:.3} s",
            wsc[k],
            nr[k]
        );
    }
    // a receiver the host has no history for: slow start again
    assert_eq!(wsc[5], nr[5]);
}
