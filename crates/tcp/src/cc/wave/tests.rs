//! TCP Wave against hand-written ACK sequences (the synthetic ACK clock of
//! `crate::testing`): the SYN-ACK arrives at 100 ms, so the first burst leaves
//! at 100 ms and the timer's next expiry is 100 ms + TxTime.

use super::{Mode, WaveParams};
use crate::cc::{CcConfig, CongestionControl};
use crate::config::TcpConfig;
use crate::testing::{ms, synack, Harness, SYNACK_WINDOW};
use crate::time::Duration;
use crate::Cc;

const MSS: u64 = 1000;

fn cfg() -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        sack: false,
        delayed_ack: None,
        ..TcpConfig::default()
    }
}

fn wave(params: WaveParams) -> Harness {
    let sa = synack(Some(MSS as u16), Some(1), false, SYNACK_WINDOW);
    Harness::with_algorithm(cfg(), &CcConfig::Wave(params), sa, true)
}

fn state(h: &Harness) -> &super::Wave {
    match h.tx.cc() {
        Cc::Wave(w) => w,
        other => panic!("not wave: {other:?}"),
    }
}

fn segs(range: std::ops::Range<u64>, rtx: bool) -> Vec<(u64, bool)> {
    range.map(|i| (i * MSS, rtx)).collect()
}

/// ACKs the segments `[from, to)` of a burst two at a time, `gap_ms` apart,
/// starting at `t0` ms.
fn ack_train(h: &mut Harness, from: u64, to: u64, t0: u64, gap_ms: u64) {
    let mut t = t0;
    let mut seg = from;
    while seg < to {
        seg = (seg + 2).min(to);
        h.at(t);
        h.ack(seg * MSS, &[]);
        t += gap_ms;
    }
}

#[test]
fn bursts_leave_only_at_timer_expiry() {
    let mut h = wave(WaveParams::default());
    assert_eq!(
        h.sent(),
        segs(0..10, false),
        "the first burst at establishment"
    );
    assert_eq!(
        h.tx.poll_timeout(),
        Some(ms(600)),
        "next expiry after TxTime0 = 500 ms"
    );
    // ACKs release nothing between expiries
    ack_train(&mut h, 0, 10, 150, 1);
    assert!(h.sent().is_empty());
    h.at(599);
    h.tx.handle_timeout(h.now);
    assert!(h.sent().is_empty());
    h.at(600);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.sent(), segs(10..20, false));
}

#[test]
fn tx_time_after_clean_trains_is_dispersion_plus_half_delta_rtt() {
    let mut h = wave(WaveParams::default());
    h.sent();
    // Train 1: RTT 50 ms, five ACKs 2 ms apart: dispersion 8 ms, DeltaRTT 0.
    ack_train(&mut h, 0, 10, 150, 2);
    let w = state(&h);
    assert_eq!(w.dispersion(), Some(Duration::from_millis(8)));
    assert_eq!(w.rtt_stats().delta(), Duration::ZERO);
    assert_eq!(w.tx_time(), Duration::from_millis(8));
    // The new TxTime schedules the expiry after the next one.
    h.at(600);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.sent(), segs(10..20, false));
    assert_eq!(h.tx.poll_timeout(), Some(ms(608)));
    // Train 2: RTT 60 ms, ACKs 2.5 ms apart (dispersion 10 ms).
    let base = 660_000_000u64;
    for k in 0..5u64 {
        h.now = crate::Instant::from_nanos(base + k * 2_500_000);
        h.ack((12 + 2 * k) * MSS, &[]);
    }
    let w = state(&h);
    // min 50, sample 60: weight (60 - 50) / 60 on the old average (50):
    // avg = 50/6 + 60 * 5/6 = 58.33 ms; DeltaRTT = 8.33 ms
    let avg = w.rtt_stats().avg.unwrap().as_secs_f64();
    assert!((avg - (50.0 / 6.0 + 50.0) / 1e3).abs() < 1e-9, "avg {avg}");
    // smoothed dispersion (8 + 10) / 2 = 9 ms; TxTime = 9 + 8.33 / 2 ms
    assert_eq!(w.dispersion(), Some(Duration::from_millis(9)));
    let expected = 0.009 + (avg - 0.050) / 2.0;
    assert!((w.tx_time().as_secs_f64() - expected).abs() < 1e-9);
    assert_eq!(w.mode(), Mode::Tracking);
}

#[test]
fn adjustment_mode_when_delta_rtt_exceeds_beta() {
    let mut h = wave(WaveParams {
        beta: Duration::from_millis(20),
        ..WaveParams::default()
    });
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2); // RTT 50 ms, dispersion 8 ms
    assert_eq!(state(&h).tx_time(), Duration::from_millis(8));
    h.at(600);
    h.tx.handle_timeout(h.now);
    h.sent();
    ack_train(&mut h, 10, 20, 700, 2); // RTT 100 ms: avg 75, DeltaRTT 25 > 20
    let w = state(&h);
    assert_eq!(w.mode(), Mode::Adjustment);
    assert_eq!(w.tx_time(), Duration::from_millis(500), "back to TxTime0");
    assert_eq!(
        w.rtt_stats().avg,
        Some(Duration::from_millis(100)),
        "the largest RTT seen"
    );
    assert_eq!(w.rtt_stats().min, None, "the minimum forgotten");
    let mut m = vec![0.0; w.metric_names().len()];
    w.metrics(&mut m);
    // stability factor avgRTT / dispersion = 100 / 8 = 12.5 -> 13 trains skipped
    assert_eq!(m[7], 13.0);
}

#[test]
fn fast_retransmission_keeps_the_schedule_and_shrinks_the_next_burst() {
    let mut h = wave(WaveParams::default());
    h.sent();
    // segment 0 lost: segments 1-9 arrive and each is answered by a duplicate ACK
    for k in 0..3 {
        h.at(150 + k);
        h.ack(0, &[]);
    }
    assert_eq!(h.sent(), vec![(0, true)], "the lost segment at once");
    assert_eq!(h.tx.cc().cwnd(), super::UNLIMITED, "no window reduction");
    assert_eq!(
        h.tx.poll_timeout(),
        Some(ms(600)),
        "the burst schedule is unchanged"
    );
    h.at(600);
    h.tx.handle_timeout(h.now);
    assert_eq!(
        h.sent(),
        segs(10..19, false),
        "one segment less in the next burst"
    );
    h.at(900);
    h.tx.handle_timeout(h.now); // the RTO timer is not due yet; nothing changes
    h.at(1100);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.sent().len(), 10, "back to the full burst after that");
}

#[test]
fn rto_resets_burst_and_timer_and_restarts_from_snd_una() {
    let mut h = wave(WaveParams::default());
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2); // TxTime 8 ms
    h.at(600);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.sent(), segs(10..20, false));
    // a fast retransmission shrinks the next burst
    for k in 0..3 {
        h.at(650 + k);
        h.ack(10 * MSS, &[]);
    }
    assert_eq!(h.sent(), vec![(10 * MSS, true)]);
    // Nothing more is acknowledged: bursts keep leaving every 8 ms, until the
    // peer's 65 kB window is full, and the RTO fires 1 s after the burst of
    // 600 ms armed it.
    let before = h.tx.stats().rto_expiries;
    let mut bursts = 0;
    while h.tx.stats().rto_expiries == before {
        h.now = h.tx.poll_timeout().unwrap();
        h.tx.handle_timeout(h.now);
        if h.tx.stats().rto_expiries == before {
            bursts += !h.sent().is_empty() as u32;
        }
    }
    assert_eq!(h.now, ms(1_600));
    assert_eq!(
        bursts, 6,
        "a 9-segment burst, then bursts until the window is full"
    );
    let w = state(&h);
    assert_eq!(w.tx_time(), Duration::from_millis(500), "TxTime0");
    assert_eq!(w.burst(), 10, "BURST0");
    assert_eq!(h.sent(), segs(10..20, true), "a burst from snd_una at once");
    assert_eq!(
        h.tx.poll_timeout(),
        Some(h.now + Duration::from_millis(500))
    );
}

#[test]
fn a_cumulative_ack_over_several_bursts_yields_one_rtt_sample() {
    let mut h = wave(WaveParams::default());
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2); // TxTime 8 ms; one sample
    let samples = h.tx.rtt().sample_count();
    for t in [600, 608, 616] {
        h.at(t);
        h.tx.handle_timeout(h.now);
        assert_eq!(h.sent().len(), 10);
    }
    // segment 10 (first of the three bursts) lost; segments 11-39 arrive
    for k in 0..3 {
        h.at(660 + k);
        h.ack(10 * MSS, &[]);
    }
    assert_eq!(h.sent(), vec![(10 * MSS, true)]);
    // the retransmission fills the hole: one ACK covers all three bursts
    h.at(720);
    h.ack(40 * MSS, &[]);
    assert_eq!(
        h.tx.rtt().sample_count(),
        samples + 1,
        "one sample for three bursts"
    );
    // the sample is the inflated one (first packet at 600 ms to 720 ms) and it
    // reaches the RTO estimator
    assert_eq!(h.tx.rtt().latest(), Some(Duration::from_millis(120)));
}

#[test]
fn a_dispersion_sample_above_the_average_rtt_is_discarded() {
    let mut h = wave(WaveParams::default());
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2); // RTT 50 ms, dispersion 8 ms
    assert_eq!(state(&h).tx_time(), Duration::from_millis(8));
    h.at(600);
    h.tx.handle_timeout(h.now);
    h.sent();
    // RTT 50 ms again but the ACKs 20 ms apart: an 80 ms train, above the
    // 50 ms average RTT
    ack_train(&mut h, 10, 20, 650, 20);
    let w = state(&h);
    assert_eq!(
        w.dispersion(),
        Some(Duration::from_millis(8)),
        "not averaged in"
    );
    assert_eq!(w.tx_time(), Duration::from_millis(8), "TxTime unchanged");
}

#[test]
fn after_an_rto_the_cumulative_ack_that_completes_a_cut_train_restores_tx_time() {
    // DCNET 2016, section 3.2: the first cumulative ACK after an outage
    // completes the train the outage cut; its dispersion is discarded but
    // TxTime comes back from the smoothed statistics (the old link's value).
    let mut h = wave(WaveParams::default());
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2); // dispersion 8 ms, TxTime 8 ms
    h.at(600);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.sent(), segs(10..20, false));
    // the outage: nothing comes back until the RTO
    let before = h.tx.stats().rto_expiries;
    while h.tx.stats().rto_expiries == before {
        h.now = h.tx.poll_timeout().unwrap();
        h.tx.handle_timeout(h.now);
    }
    h.sent();
    assert_eq!(state(&h).tx_time(), Duration::from_millis(500), "TxTime0");
    // the link is back: one ACK covers the burst of 600 ms at once
    h.at(h.now.as_nanos() / 1_000_000 + 100);
    h.ack(20 * MSS, &[]);
    let w = state(&h);
    assert_eq!(
        w.dispersion(),
        Some(Duration::from_millis(8)),
        "no new sample"
    );
    assert_eq!(
        w.tx_time(),
        Duration::from_millis(8),
        "the old link's TxTime"
    );
}
