//! The bodies of the scenario and trace fuzz targets (`fuzz/`, run with
//! cargo-fuzz) and of the property tests over arbitrary bytes that stand in
//! for them where no fuzzer runs (`tests/fuzz_bytes.rs`).
//!
//! [`scenario_toml`] feeds any bytes to the scenario parser: it must return
//! a scenario or an error naming a field, never panic; a scenario it accepts
//! must survive the JSON round trip the Python layer makes, must build, and
//! (when small) must run its first 100 simulated milliseconds.
//!
//! [`trace_file`] feeds any bytes to the trace parsers (a Mahimahi trace,
//! CSV traces of rate, delay and loss): each must return a trace or an
//! error naming the line, never panic, and an error never quotes more of
//! the file than a short excerpt; a trace it accepts must be read at any
//! instant of the longest run without overflow, and a link it drives must
//! run.

use crate::simulation::Simulation;
use wavelab_model::link::trace_file::EXCERPT_CHARS;
use wavelab_model::link::{
    CsvTrace, DelayInterpolation, MahimahiTrace, Opportunities, Quantity, TraceError, MTU,
};
use wavelab_model::scenario::Scenario;
use wavelab_tcp::units::MAX_DURATION;
use wavelab_tcp::Instant;

/// The largest accepted scenario (flows and links) that is also run.
const RUN_AT_MOST: usize = 64;

/// Parses `data` as a scenario file; see the module description.
pub fn scenario_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sc = match Scenario::from_toml_str(text) {
        Ok(sc) => sc,
        Err(e) => {
            assert!(!e.message.is_empty(), "an error without a message");
            return;
        }
    };
    let again = Scenario::from_json_str(&sc.to_json())
        .unwrap_or_else(|e| panic!("the normalised scenario is refused: {e}\n{}", sc.to_json()));
    assert_eq!(again, sc, "the JSON round trip changed the scenario");
    let flows: u64 = sc.flows.iter().map(|f| u64::from(f.count)).sum();
    let small = flows <= RUN_AT_MOST as u64 && sc.links.len() <= RUN_AT_MOST;
    let mut sim =
        Simulation::new(sc).unwrap_or_else(|e| panic!("a valid scenario does not build: {e}"));
    if small {
        sim.run_until(Instant::from_nanos(100_000_000));
        let _ = sim.results();
    }
}

/// Checks that `e` names a line of `text` and quotes at most a short
/// excerpt of it: every quoted part of its message is at most
/// [`EXCERPT_CHARS`] characters and `...`, and the message is short, however
/// long the line (a file that is not a trace, `/etc/shadow`, was printed
/// back whole).
fn quotes_at_most_an_excerpt(e: &TraceError, text: &str) {
    assert!(
        e.line <= text.lines().count(),
        "line {} of {}",
        e.line,
        text.lines().count()
    );
    assert!(!e.message.is_empty());
    assert!(e.message.len() <= 300, "{:?}", e.message);
    // No run of the offending line twice an excerpt long is echoed. (The
    // message's quoted parts cannot be checked instead: a line holding a
    // quote mark, as the one-byte file `"` does, shifts them.)
    if let Some(line) = text.lines().nth(e.line.saturating_sub(1)) {
        let chars: Vec<char> = line.chars().collect();
        for run in chars.windows(2 * EXCERPT_CHARS) {
            let run: String = run.iter().collect();
            assert!(!e.message.contains(&run), "{:?} echoes {run:?}", e.message);
        }
    }
}

/// The instants a trace is read at: its start, around its points, and the
/// end of the longest run.
fn instants(points: impl Iterator<Item = u64>) -> Vec<Instant> {
    let end = MAX_DURATION.as_nanos();
    let mut at: Vec<u64> = vec![0, 1, 999_999, end / 2, end - 1, end];
    for p in points.take(16) {
        at.extend([p.saturating_sub(1), p, p.saturating_add(1).min(end)]);
    }
    at.into_iter().map(Instant::from_nanos).collect()
}

/// Parses `data` as every kind of trace; see the module description.
pub fn trace_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match MahimahiTrace::parse("fuzz.trace", text) {
        Err(e) => quotes_at_most_an_excerpt(&e, text),
        Ok(t) => {
            assert!(!t.is_empty() && !t.period().is_zero());
            let period = t.period().as_nanos();
            let mut o = Opportunities::new(t.clone());
            let mut last = Instant::ZERO;
            for at in instants(std::iter::once(period)) {
                let got = o.take(at.max(last));
                assert!(
                    got >= at.max(last),
                    "an opportunity before it was asked for"
                );
                assert!(
                    got.as_nanos() - at.max(last).as_nanos() <= period,
                    "later than a period"
                );
                last = got;
            }
            if t.len() <= 10_000 {
                run_traced(text);
            }
        }
    }
    for what in [Quantity::Rate, Quantity::Delay, Quantity::Loss] {
        match CsvTrace::parse("fuzz.csv", text, what) {
            Err(e) => quotes_at_most_an_excerpt(&e, text),
            Ok(mut t) => {
                let times: Vec<u64> = t.points().map(|(s, _)| (s * 1e9) as u64).collect();
                for at in instants(times.into_iter()) {
                    match what {
                        Quantity::Rate => {
                            if let Some(r) = t.rate(at) {
                                assert!(r.as_bps() > 0);
                            }
                        }
                        Quantity::Delay => {
                            for how in [DelayInterpolation::Step, DelayInterpolation::Linear] {
                                if let Some(d) = t.delay(at, how) {
                                    assert!(d <= MAX_DURATION);
                                }
                            }
                        }
                        Quantity::Loss => {
                            if let Some(p) = t.step(at) {
                                assert!((0.0..=1.0).contains(&p));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Runs the first simulated second of a link driven by the Mahimahi trace
/// `text` (written to a file of this process's own).
fn run_traced(text: &str) {
    let path = std::env::temp_dir().join(format!("wavelab-fuzz-{}.trace", std::process::id()));
    std::fs::write(&path, text).expect("a temporary file");
    let scenario = format!(
        "duration = \"5s\"\n[[links]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbit/s\"\n\
         delay = \"5ms\"\nforward = {{ trace = {:?} }}\n[[flows]]\nfrom = \"a\"\nto = \"b\"\n",
        path.to_str().expect("a UTF-8 path")
    );
    let sc = Scenario::from_toml_str(&scenario)
        .unwrap_or_else(|e| panic!("a trace that parses is refused in a scenario: {e}"));
    let mut sim = Simulation::new(sc).unwrap_or_else(|e| panic!("does not build: {e}"));
    sim.run_until(Instant::from_nanos(1_000_000_000));
    // the direction never carries more than the trace's opportunities in
    // that second, a packet of at most the MTU each (a wrapped period once
    // turned a 2-packet trace into 25 Mbit/s)
    let t = MahimahiTrace::parse("fuzz.trace", text).expect("parsed before");
    let period = t.period().as_nanos() / 1_000_000;
    let opportunities: u64 = t
        .offsets_ms()
        .iter()
        .filter(|&&o| o <= 1000)
        .map(|&o| 1 + (1000 - o) / period)
        .sum();
    let delivered = sim.results().links.u64s("delivered_bytes")[0];
    assert!(
        delivered <= opportunities * u64::from(MTU),
        "{delivered} bytes through {opportunities} opportunities"
    );
}
