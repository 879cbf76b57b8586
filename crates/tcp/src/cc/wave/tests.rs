//! TCP Wave against hand-written ACK sequences (the synthetic ACK clock of
//! `crate::testing`): the SYN-ACK arrives at 100 ms, so the first burst leaves
//! at 100 ms and the timer's next expiry is 100 ms + TxTime.

use super::{DispersionFilter, DupackTrain, Mode, RtoSamples, Variant, WaveParams};
use crate::cc::{CcConfig, CongestionControl};
use crate::testing::{ms, Harness};
use crate::time::{Duration, Instant};
use crate::Cc;

const MSS: u64 = 1000;

fn wave(params: WaveParams) -> Harness {
    Harness::plain(&CcConfig::Wave(params), MSS as u32)
}

fn variant(v: Variant) -> Harness {
    wave(v.params())
}

fn state(h: &Harness) -> &super::Wave {
    match h.tx.cc() {
        Cc::Wave(w) => w,
        other => panic!("not wave: {other:?}"),
    }
}

fn state_mut(h: &mut Harness) -> &mut super::Wave {
    match h.tx.cc_mut() {
        Cc::Wave(w) => w,
        other => panic!("not wave: {other:?}"),
    }
}

fn segs(range: std::ops::Range<u64>, rtx: bool) -> Vec<(u64, bool)> {
    range.map(|i| (i * MSS, rtx)).collect()
}

fn d(t: u64) -> Duration {
    Duration::from_millis(t)
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

/// One round: the send timer fires, its burst leaves, and the burst is
/// ACKed two segments at a time, the first ACK `rtt_ms` after the burst, the
/// next ones 2 ms apart (five ACKs for ten segments: a dispersion of 10 ms
/// with the n/(n - 1) scaling). Returns the burst's segment count.
fn round(h: &mut Harness, rtt_ms: u64) -> u64 {
    let t = h.tx.cc().timer().expect("Wave's send timer");
    h.now = t;
    h.tx.handle_timeout(t);
    let sent = h.sent();
    assert!(!sent.is_empty(), "a burst at the expiry");
    let first = sent[0].0 / MSS;
    let n = sent.len() as u64;
    let t_ms = t.as_nanos() / 1_000_000;
    ack_train(h, first, first + n, t_ms + rtt_ms, 2);
    n
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
fn five_acks_2_ms_apart_are_a_dispersion_of_10_ms_not_8() {
    // n ACKs span n - 1 gaps: the train's first-to-last span is scaled by
    // n / (n - 1) (the netdev posting's rule, the default variant's)
    let mut h = wave(WaveParams::default());
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2); // 5 ACKs, 150 .. 158 ms
    assert_eq!(state(&h).dispersion(), Some(d(10)));
    // the Linux 4.12 module took the plain span
    let mut h = variant(Variant::Linux412);
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2);
    assert_eq!(state(&h).dispersion(), Some(d(8)));
}

#[test]
fn tx_time_after_clean_trains_is_dispersion_plus_half_delta_rtt() {
    let mut h = wave(WaveParams::default());
    h.sent();
    // Train 1: RTT 50 ms, five ACKs 2 ms apart: dispersion 10 ms, DeltaRTT 0.
    ack_train(&mut h, 0, 10, 150, 2);
    let w = state(&h);
    assert_eq!(w.rtt_stats().delta(), Duration::ZERO);
    assert_eq!(w.tx_time(), d(10));
    // The new TxTime schedules the expiry after the next one.
    h.at(600);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.sent(), segs(10..20, false));
    assert_eq!(h.tx.poll_timeout(), Some(ms(610)));
    // Train 2: RTT 60 ms, ACKs 2.5 ms apart (dispersion 12.5 ms).
    let base = 660_000_000u64;
    for k in 0..5u64 {
        h.now = Instant::from_nanos(base + k * 2_500_000);
        h.ack((12 + 2 * k) * MSS, &[]);
    }
    let w = state(&h);
    // min 50, sample 60: weight (60 - 50) / 60 on the old average (50):
    // avg = 50 * 10/60 + 50 = 58.33 ms; DeltaRTT = 8.33 ms
    let avg = w.rtt_stats().avg.unwrap().as_secs_f64();
    assert!((avg - (50.0 / 6.0 + 50.0) / 1e3).abs() < 1e-9, "avg {avg}");
    // smoothed dispersion (10 + 12.5) / 2 = 11.25 ms; TxTime = 11.25 + 8.33 / 2 ms
    assert_eq!(w.dispersion(), Some(Duration::from_micros(11_250)));
    let expected = 0.011_25 + (avg - 0.050) / 2.0;
    assert!((w.tx_time().as_secs_f64() - expected).abs() < 1e-9);
    assert_eq!(w.mode(), Mode::Tracking);
}

/// Sets the statistics so that the next train's end, with a valid sample of
/// 100 ms, brings the average to `avg_ms` against a 50 ms minimum:
/// avg' = a * avg + min with a = (100 - 50) / 100.
fn prime_for_adjustment(h: &mut Harness, avg_ms: u64, tx_time: Duration) {
    let w = state_mut(h);
    w.rtt.min = Some(d(50));
    w.rtt.avg = Some(d(2 * (avg_ms - 50)));
    w.rtt.max = Some(d(900));
    w.tx_time = tx_time;
}

#[test]
fn adjustment_entry_with_average_430_ms_and_tx_time_183_ms_skips_exactly_2_trains() {
    let mut h = wave(WaveParams::default());
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2); // dispersion 10 ms
    prime_for_adjustment(&mut h, 430, d(183));
    round(&mut h, 100); // the average becomes 430 ms; DeltaRTT 380 ms > beta 350 ms
    let w = state(&h);
    assert_eq!(w.mode(), Mode::Adjustment);
    assert_eq!(w.stability(), 2, "430 / 183 = 2.35, in integer arithmetic");
    assert_eq!(w.tx_time(), d(500), "back to TxTime0");
    assert_eq!(w.rtt_stats().avg, Some(d(900)), "the largest RTT seen");
    assert_eq!(w.rtt_stats().min, None, "the minimum forgotten");
    // the first train after the entry: the counter goes to 1, TxTime stays
    round(&mut h, 60);
    assert_eq!((state(&h).stability(), state(&h).tx_time()), (1, d(500)));
    round(&mut h, 60);
    assert_eq!((state(&h).stability(), state(&h).tx_time()), (0, d(500)));
    // the third train updates TxTime: tracking, from the dispersion
    round(&mut h, 60);
    let w = state(&h);
    assert_eq!(w.mode(), Mode::Tracking);
    assert_eq!(w.tx_time(), d(10));
}

#[test]
fn the_stability_counter_wraps_as_the_modules_8_bit_field() {
    let mut h = wave(WaveParams::default());
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2);
    prime_for_adjustment(&mut h, 2_600, d(10));
    round(&mut h, 100);
    // 2600 ms / 10 ms = 260 trains, stored in 8 bits: 260 - 256 = 4
    assert_eq!(state(&h).stability(), 4);
}

#[test]
fn after_adjustment_the_first_sample_is_the_minimum_and_the_average() {
    let mut h = wave(WaveParams::default());
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2);
    prime_for_adjustment(&mut h, 430, d(183));
    round(&mut h, 100);
    assert_eq!(state(&h).rtt_stats().avg, Some(d(900)));
    // a 480 ms path from now on (a handover to a long link)
    round(&mut h, 480);
    let s = *state(&h).rtt_stats();
    assert_eq!(s.min, Some(d(480)), "the next sample is the minimum");
    assert_eq!(
        s.avg,
        Some(d(480)),
        "and, with weight 0 on the old average, the average"
    );
    assert_eq!(s.delta(), Duration::ZERO);
    assert_eq!(s.max, Some(d(900)), "the largest RTT is never reset");
    round(&mut h, 480);
    round(&mut h, 480);
    // the counter is spent: tracking sets TxTime from the dispersion alone
    assert_eq!(state(&h).tx_time(), d(10));
    assert_eq!(state(&h).mode(), Mode::Tracking);
}

/// One clean train (RTT 50 ms, dispersion 10 ms), a burst at 600 ms, then an
/// outage: nothing comes back and the timers run until the RTO fires.
fn train_then_outage_until_the_rto() -> Harness {
    train_then_outage_until_the_rto_with(WaveParams::default())
}

fn train_then_outage_until_the_rto_with(params: WaveParams) -> Harness {
    let mut h = wave(params);
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2);
    h.at(600);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.sent(), segs(10..20, false));
    let before = h.tx.stats().rto_expiries;
    while h.tx.stats().rto_expiries == before {
        h.now = h.tx.poll_timeout().unwrap();
        h.tx.handle_timeout(h.now);
    }
    h
}

#[test]
fn an_ack_without_a_karn_valid_sample_leaves_the_statistics_but_feeds_the_rto() {
    // min = avg = max = 50 ms; the RTO resends from segment 10
    let mut h = train_then_outage_until_the_rto();
    assert_eq!(h.sent(), segs(10..20, true));
    let rto_at = h.now.as_nanos() / 1_000_000;
    let stats = *state(&h).rtt_stats();
    let samples = h.tx.rtt().sample_count();
    // the retransmitted segments are ACKed two at a time, 300 ms later: each
    // ACK covers retransmitted data, so Karn's rule gives no sample
    h.at(rto_at + 300);
    h.ack(12 * MSS, &[]);
    assert_eq!(h.tx.rtt().sample_count(), samples + 1, "the burst's sample");
    assert_eq!(
        h.tx.rtt().latest(),
        Some(d(rto_at + 300 - 600)),
        "inflated (from the burst's first transmission at 600 ms), and it reaches \
         the RTO estimator (DCNET 2016, section 2.2)"
    );
    ack_train(&mut h, 14, 20, rto_at + 302, 2);
    let after = *state(&h).rtt_stats();
    assert_eq!(
        (after.min, after.avg, after.max),
        (stats.min, stats.avg, stats.max),
        "min, avg and max unchanged"
    );
    assert_eq!(after.max, Some(d(50)));
}

#[test]
fn with_the_kernels_rto_samples_a_repair_gives_the_estimator_no_inflated_sample() {
    // the same exchange as above with rto_samples = "karn": the ACKs of the
    // retransmitted segments cover retransmitted data, and the sender, which
    // now takes the estimator's samples itself, takes none from them
    let params = WaveParams {
        rto_samples: RtoSamples::Karn,
        ..WaveParams::default()
    };
    let mut h = train_then_outage_until_the_rto_with(params);
    assert!(!state(&h).takes_rtt_samples());
    assert_eq!(h.sent(), segs(10..20, true));
    let rto_at = h.now.as_nanos() / 1_000_000;
    let samples = h.tx.rtt().sample_count();
    let latest = h.tx.rtt().latest();
    h.at(rto_at + 300);
    h.ack(12 * MSS, &[]);
    ack_train(&mut h, 14, 20, rto_at + 302, 2);
    assert_eq!(h.tx.rtt().sample_count(), samples, "Karn: no sample");
    assert_eq!(h.tx.rtt().latest(), latest);
    // the train before the outage: one sample per ACK, 50-58 ms, none inflated
    assert!(latest.is_some_and(|l| l <= d(60)), "{latest:?}");
}

#[test]
fn the_first_release_locks_tx_time_at_tx_time0_once_adjustment_set_the_minimum_to_zero() {
    // A 100 ms path that turns into a 400 ms one (beta 150 ms): both revisions
    // enter adjustment; the fixed one returns to tracking on the new path,
    // the first release never does (DeltaRTT = average - 0 > beta).
    let mut tracking = Vec::new();
    for v in [Variant::Linux412, Variant::Linux412First] {
        let mut h = variant(v);
        h.sent();
        ack_train(&mut h, 0, 10, 200, 2);
        let mut modes = Vec::new();
        for k in 0..40 {
            round(&mut h, if k < 3 { 100 } else { 400 });
            modes.push(state(&h).mode());
        }
        assert!(
            modes.contains(&Mode::Adjustment),
            "{v:?} entered adjustment"
        );
        let w = state(&h);
        tracking.push((w.mode(), w.tx_time()));
        if v == Variant::Linux412First {
            assert_eq!(w.rtt_stats().min, Some(Duration::ZERO));
        }
    }
    assert_eq!(
        tracking[0],
        (Mode::Tracking, d(8)),
        "linux-4.12: the plain span"
    );
    assert_eq!(tracking[1], (Mode::Adjustment, d(500)), "locked at TxTime0");
}

#[test]
fn the_netdev_posting_starts_at_200_ms_and_keeps_the_latest_dispersion() {
    let mut h = variant(Variant::Netdev2017);
    assert_eq!(h.sent().len(), 10);
    assert_eq!(h.tx.poll_timeout(), Some(ms(300)), "TxTime0 = 200 ms");
    ack_train(&mut h, 0, 10, 150, 2);
    assert_eq!(state(&h).dispersion(), Some(d(10)));
    assert_eq!(
        state(&h).params().dispersion_filter,
        DispersionFilter::Latest
    );
    h.at(300);
    h.tx.handle_timeout(h.now);
    h.sent();
    ack_train(&mut h, 10, 20, 350, 4); // 16 ms span: 20 ms scaled
    assert_eq!(state(&h).dispersion(), Some(d(20)), "not averaged");
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
    ack_train(&mut h, 0, 10, 150, 2); // TxTime 10 ms
    h.at(600);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.sent(), segs(10..20, false));
    // a fast retransmission shrinks the next burst
    for k in 0..3 {
        h.at(650 + k);
        h.ack(10 * MSS, &[]);
    }
    assert_eq!(h.sent(), vec![(10 * MSS, true)]);
    // Nothing more is acknowledged: bursts keep leaving every 10 ms, until the
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
    assert_eq!(w.tx_time(), d(500), "TxTime0");
    assert_eq!(w.burst(), 10, "BURST0");
    assert_eq!(h.sent(), segs(10..20, true), "a burst from snd_una at once");
    assert_eq!(h.tx.poll_timeout(), Some(h.now + d(500)));
}

#[test]
fn a_cumulative_ack_over_several_bursts_yields_one_rtt_sample() {
    let mut h = wave(WaveParams::default());
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2); // TxTime 10 ms; one sample
    let samples = h.tx.rtt().sample_count();
    let stats = *state(&h).rtt_stats();
    for t in [600, 610, 620] {
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
    // reaches the RTO estimator, not Wave's statistics
    assert_eq!(h.tx.rtt().latest(), Some(d(120)));
    let after = *state(&h).rtt_stats();
    assert_eq!(
        (after.min, after.avg, after.max),
        (stats.min, stats.avg, stats.max)
    );
}

#[test]
fn a_dispersion_sample_above_the_average_rtt_is_discarded() {
    let mut h = wave(WaveParams::default());
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2); // RTT 50 ms, dispersion 10 ms
    assert_eq!(state(&h).tx_time(), d(10));
    h.at(600);
    h.tx.handle_timeout(h.now);
    h.sent();
    // RTT 50 ms again but the ACKs 20 ms apart: a 100 ms train, above the
    // 50 ms average RTT
    ack_train(&mut h, 10, 20, 650, 20);
    let w = state(&h);
    assert_eq!(w.dispersion(), Some(d(10)), "not averaged in");
    assert_eq!(w.tx_time(), d(10), "TxTime unchanged");
}

#[test]
fn after_an_rto_the_cumulative_ack_that_completes_a_cut_train_restores_tx_time() {
    // DCNET 2016, section 3.2: the first cumulative ACK after an outage
    // completes the train the outage cut; its dispersion is discarded and its
    // sample (covering retransmitted data) leaves the statistics alone, so
    // TxTime comes back from them (the old link's value).
    let mut h = train_then_outage_until_the_rto(); // dispersion 10 ms, TxTime 10 ms
    h.sent();
    assert_eq!(state(&h).tx_time(), d(500), "TxTime0");
    // the link is back: one ACK covers the burst of 600 ms at once
    h.at(h.now.as_nanos() / 1_000_000 + 100);
    h.ack(20 * MSS, &[]);
    let w = state(&h);
    assert_eq!(w.dispersion(), Some(d(10)), "no new sample");
    assert_eq!(w.tx_time(), d(10), "the old link's TxTime");
}

/// A clean first train (dispersion 10 ms, TxTime 10 ms), then the burst of
/// 600 ms loses its first segment while the path has slowed to 4 ms per
/// segment: its 9 later segments and the whole next burst (sent at 610 ms)
/// draw 19 duplicate ACKs, 4 ms apart from 650 ms.
fn loss_on_a_slower_path(dupack_train: DupackTrain) -> Harness {
    let mut h = wave(WaveParams {
        dupack_train,
        ..WaveParams::default()
    });
    h.sent();
    ack_train(&mut h, 0, 10, 150, 2);
    assert_eq!(state(&h).tx_time(), d(10));
    for (t, burst) in [(600, 10..20), (610, 20..30)] {
        h.at(t);
        h.tx.handle_timeout(h.now);
        assert_eq!(h.sent(), segs(burst, false));
    }
    for k in 0..19 {
        h.at(650 + 4 * k);
        h.ack(10 * MSS, &[]);
    }
    assert_eq!(h.sent(), vec![(10 * MSS, true)], "one fast retransmission");
    h
}

#[test]
fn a_duplicate_ack_cuts_the_train_by_default() {
    let h = loss_on_a_slower_path(DupackTrain::Cut);
    let w = state(&h);
    assert_eq!(w.dispersion(), Some(d(10)), "no sample from a cut train");
    assert_eq!(w.tx_time(), d(10), "TxTime stays at the old path's");
}

#[test]
fn counted_duplicate_acks_give_the_slower_paths_dispersion() {
    // the module's rule: the duplicate ACKs are delivered segments; the
    // lost burst's round ends at its tenth (686 ms), 36 ms after its first,
    // ten ACKs: a sample of 40 ms, averaged with the previous 10 ms
    let h = loss_on_a_slower_path(DupackTrain::Count);
    let w = state(&h);
    assert_eq!(w.dispersion(), Some(d(25)));
    assert_eq!(
        w.tx_time(),
        d(25),
        "tracking: dispersion + DeltaRTT / 2, DeltaRTT 0"
    );
    assert_eq!(
        w.rtt_stats().avg,
        Some(d(50)),
        "a train closed by duplicate ACKs has no RTT sample: the average stays"
    );
}
