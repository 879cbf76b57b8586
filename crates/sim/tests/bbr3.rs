//! System tests of BBRv3 (draft-ietf-ccwg-bbr-06) on the standard dumbbell
//! of `common::dumbbell` (10 Mbit/s, 50 ms bottleneck, RTT 104 ms, BDP 87
//! packets of 1500 B), shortened to 20 s. Each test prints its figures (run
//! with `--nocapture`).

use crate::common::{bottleneck_queue, delivered_at, dumbbell, mean, run};
use wavelab_sim::Results;

/// Payload rate of the bottleneck: 10 Mbit/s × 1460 / 1500.
const PAYLOAD_RATE: f64 = 10e6 * 1460.0 / 1500.0;

fn flow(cc: &str) -> String {
    format!("[[flows]]\nfrom = \"sender\"\nto = \"receiver\"\ncc = \"{cc}\"\n")
}

/// The dumbbell with buffer `queue`, 20 s, one flow of `cc`, and `extra`
/// on the bottleneck link.
fn scenario(queue: &str, cc: &str, extra: &str) -> String {
    dumbbell(queue, &flow(cc))
        .replace("duration = \"60s\"", "duration = \"20s\"")
        .replace(
            &format!("queue = \"{queue}\""),
            &format!("queue = \"{queue}\"\n{extra}"),
        )
}

/// Series column `col` of flow 0 at time `t`.
fn at(r: &Results, col: &str, t: f64) -> f64 {
    let time = r.series.f64s("time");
    let i = (0..time.len())
        .find(|&i| (time[i] - t).abs() < 1e-9)
        .unwrap_or_else(|| panic!("no sample at {t}"));
    r.series.numbers(col)[i]
}

/// Goodput over 5..20 s (after Startup) as a share of the payload rate, the
/// mean queueing delay at the bottleneck over the same span (s) and the
/// bytes retransmitted in it.
fn figures(r: &Results) -> (f64, f64, f64) {
    let bytes = (delivered_at(r, 0, 20.0) - delivered_at(r, 0, 5.0)) as f64;
    let utilisation = bytes * 8.0 / 15.0 / PAYLOAD_RATE;
    let delay = mean(&bottleneck_queue(r, 5.0, 20.0)) * 8.0 / 10e6;
    let rexmit = at(r, "bytes_retransmitted", 20.0) - at(r, "bytes_retransmitted", 5.0);
    (utilisation, delay, rexmit)
}

/// A buffer of 10 packets (an eighth of the BDP): BBR v1's 2-BDP window
/// keeps it full and overflowing, while BBRv3's loss bound (section
/// 5.5.10.2, inflight_longterm at the flight that lost more than 2 %)
/// keeps its flight near the BDP: it fills the link with a shorter queue
/// and a fraction of v1's retransmissions.
#[test]
fn bbr3_fills_a_shallow_buffer_with_less_queue_and_loss_than_v1() {
    let v3 = figures(&run(&scenario("10pkt", "bbr3", "")));
    let v1 = figures(&run(&scenario("10pkt", "bbr", "")));
    eprintln!(
        "10-packet buffer, 5..20 s: bbr3 utilisation {:.3}, queueing {:.1} ms, {} B retransmitted; \
         bbr utilisation {:.3}, queueing {:.1} ms, {} B retransmitted",
        v3.0,
        v3.1 * 1e3,
        v3.2,
        v1.0,
        v1.1 * 1e3,
        v1.2
    );
    assert!(v3.0 > 0.85, "bbr3 utilisation {}", v3.0);
    assert!(
        v3.1 < 0.5 * v1.1,
        "bbr3 queueing {} s, bbr {} s",
        v3.1,
        v1.1
    );
    assert!(
        v3.2 * 5.0 < v1.2,
        "retransmitted bbr3 {} B, bbr {} B",
        v3.2,
        v1.2
    );
}

/// 5 % random loss at the bottleneck (a deep buffer, 87 packets): the
/// draft's section 1 promises much higher throughput than loss-based
/// congestion control under random loss. BBRv3 keeps well above CUBIC,
/// whose window shrinks at every loss; it is below BBR v1, which ignores
/// loss, because the probes that lose more than 2 % cut inflight_longterm
/// (section 5.5.10.2) and every lossy round outside a probe lowers the
/// short-term bounds by beta (section 5.5.10.3): the series show the bound
/// set after the first probe.
#[test]
fn bbr3_under_five_percent_random_loss() {
    let loss = "forward = { loss = { model = \"bernoulli\", p = 0.05 } }";
    let v3r = run(&scenario("87pkt", "bbr3", loss));
    let v3 = figures(&v3r);
    let cubic = figures(&run(&scenario("87pkt", "cubic", loss)));
    let v1 = figures(&run(&scenario("87pkt", "bbr", loss)));
    eprintln!(
        "5 % loss, 5..20 s utilisation: bbr3 {:.3}, bbr {:.3}, cubic {:.3}",
        v3.0, v1.0, cubic.0
    );
    assert!(v3.0 > 3.0 * cubic.0, "bbr3 {} vs cubic {}", v3.0, cubic.0);
    assert!(v3.0 < v1.0, "bbr3 {} vs bbr {}", v3.0, v1.0);
    let hi = v3r.series.numbers("cc_inflight_longterm");
    assert!(
        hi.iter().any(|v| v.is_finite()),
        "inflight_longterm never set"
    );
}
