//! `wavelab._native`: the thin PyO3 layer between the Python package and the
//! Rust simulator. Scenarios come in as JSON text (the Python side reads
//! TOML); results go out as columnar buffers, one `bytes` object per numeric
//! column, so no Python object is created per sample.

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use wavelab_sim::{ColumnData, Scenario, Table};
use wavelab_tcp::Instant;

mod emulation;
mod pycc;

create_exception!(
    _native,
    ScenarioError,
    PyValueError,
    "A scenario is invalid; the message names the field path and the bad value."
);

fn scenario_from_json(json: &str) -> PyResult<Scenario> {
    Scenario::from_json_str(json).map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// Validates a scenario given as JSON for the simulator (every check a
/// simulation's construction makes, so `wavelab validate` says what
/// `wavelab run` would); returns it normalised (defaults filled in) as JSON.
#[pyfunction]
fn normalize_scenario(json: &str) -> PyResult<String> {
    let sc = scenario_from_json(json)?;
    sc.check_simulable()
        .map_err(|e| ScenarioError::new_err(e.to_string()))?;
    Ok(sc.to_json())
}

/// Names of the congestion-control algorithms: the built-in ones, then those
/// registered (`wavelab-user-cc`'s, then Python classes).
#[pyfunction]
fn algorithms() -> Vec<&'static str> {
    wavelab_tcp::cc::CcConfig::names()
}

/// A configuration value with a unit as a number in the base unit and the
/// unit's name: a duration in seconds (`"s"`), a rate in bits per second
/// (`"bit/s"`), a size in bytes (`"B"`) or a queue limit in packets
/// (`"pkt"`); `None` for anything else. The sweep table stores its parameters
/// this way beside the text, with the parsers the scenario loader uses.
#[pyfunction]
fn quantity(text: &str) -> Option<(f64, &'static str)> {
    use wavelab_sim::scenario::{parse_queue, QueueLimit};
    use wavelab_tcp::units::{parse_duration, parse_rate, parse_size};
    if let Ok(d) = parse_duration(text) {
        return Some((d.as_secs_f64(), "s"));
    }
    if let Ok(r) = parse_rate(text) {
        return Some((r.as_bps() as f64, "bit/s"));
    }
    if let Ok(b) = parse_size(text) {
        return Some((b.0 as f64, "B"));
    }
    match parse_queue(text) {
        Ok(QueueLimit::Packets(n)) => Some((f64::from(n), "pkt")),
        _ => None,
    }
}

/// The points of a CSV rate trace (`rate_trace`) as the simulator reads
/// them: (seconds from the start, bit/s) each, the rate a step from its
/// time on (`crates/model/src/link/measured.rs`); a `ValueError` naming the
/// file and line for a bad one.
#[pyfunction]
fn rate_trace(path: &str) -> PyResult<Vec<(f64, f64)>> {
    use wavelab_sim::link::{CsvTrace, Quantity};
    let t =
        CsvTrace::load(path, Quantity::Rate).map_err(|e| PyValueError::new_err(e.to_string()))?;
    // as CsvTrace::rate applies it: whole bits per second
    Ok(t.points().map(|(s, b)| (s, (b as u64) as f64)).collect())
}

/// The path the LEO model of link `link` of a scenario (JSON) draws, as the
/// simulator and the emulator run it: its intervals as (start s, base
/// one-way delay s, downlink bit/s, uplink bit/s) and its outage windows as
/// (start s, end s); `None` for a link without `leo`. The capacity and
/// outages of a LEO link are plotted from it (one generator).
#[pyfunction]
fn leo_plan(json: &str, link: usize) -> PyResult<LeoPlanRows> {
    let sc = scenario_from_json(json)?;
    Ok(wavelab_sim::compile::leo_plan(&sc, link).map(|p| {
        let intervals = p
            .intervals
            .iter()
            .map(|i| {
                (
                    i.start.as_secs_f64(),
                    i.delay.as_secs_f64(),
                    i.downlink.as_bps() as f64,
                    i.uplink.as_bps() as f64,
                )
            })
            .collect();
        let outages = p
            .outages
            .iter()
            .map(|(a, b)| (a.as_secs_f64(), b.as_secs_f64()))
            .collect();
        (intervals, outages)
    }))
}

/// [`leo_plan`]'s rows.
type LeoPlanRows = Option<(Vec<(f64, f64, f64, f64)>, Vec<(f64, f64)>)>;

/// A Mahimahi trace (`trace`) as the simulator reads it: its delivery
/// opportunities' offsets within a period in milliseconds (`uint64`,
/// little-endian bytes) and the period in milliseconds; `ValueError` naming
/// the file and line for a file the simulator refuses. The capacity of a
/// traced link is computed from it (one parser, one set of checks).
#[pyfunction]
fn mahimahi_trace<'py>(py: Python<'py>, path: &str) -> PyResult<(Bound<'py, PyBytes>, u64)> {
    use wavelab_sim::link::MahimahiTrace;
    let t = MahimahiTrace::load(path).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let period = t.period().as_nanos() / 1_000_000;
    Ok((
        PyBytes::new(py, &le_bytes(t.offsets_ms(), u64::to_le_bytes)),
        period,
    ))
}

fn seconds_to_instant(t: f64) -> PyResult<Instant> {
    if !t.is_finite() || t < 0.0 {
        return Err(PyValueError::new_err(format!(
            "{t} is not a time in seconds"
        )));
    }
    Ok(Instant::from_nanos(
        (t * 1e9).round().min(u64::MAX as f64) as u64
    ))
}

/// Simulations whose state is allocated in this process (see
/// [`live_simulations`]).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// A simulation run driven from Python in steps (for progress bars).
///
/// Any thread may drop it and free its state. A Dask worker's profiler, for
/// one, holds the frames of the task threads it samples, so the last
/// reference to a simulation a task made may go on the worker's event-loop
/// thread; a class marked `unsendable` is not freed there (PyO3 skips the
/// destructor and reports a `RuntimeError`), and each such run leaked its
/// whole state. The engine is `Send`; the mutex makes the class `Sync` as
/// PyO3 requires, and is taken without contention (Python calls come one at
/// a time, and the methods that change the simulation reach it through
/// `&mut self` without locking).
#[pyclass(module = "wavelab._native")]
struct Simulation {
    inner: Mutex<wavelab_sim::Simulation>,
    /// A flow runs a Python algorithm: keep the interpreter while running.
    python: bool,
    /// Why a Python algorithm stopped the run.
    failure: Option<String>,
}

#[pymethods]
impl Simulation {
    /// Builds the network of a scenario given as JSON.
    /// With `forkable`, the links node handoffs touch run in reference
    /// mode (same results), so that a fork can move its handoffs
    /// (`set_handoff_at`).
    #[new]
    #[pyo3(signature = (json, forkable = false))]
    fn new(json: &str, forkable: bool) -> PyResult<Self> {
        let sc = scenario_from_json(json)?;
        let python = sc.flows.iter().any(|f| pycc::is_python(f.cc.name()));
        // a failure left by an earlier simulation's algorithm is not this one's
        let _ = pycc::take_failure();
        let _ = pycc::take_interrupt();
        let mut inner = if forkable {
            wavelab_sim::Simulation::new_forkable(sc)
        } else {
            wavelab_sim::Simulation::new(sc)
        }
        .map_err(|e| ScenarioError::new_err(e.to_string()))?;
        if python {
            // Ctrl-C (or SIGTERM, which the command line turns into it) that
            // a Python algorithm's method received stops the run at once
            inner.set_interrupt_check(pycc::interrupted);
        }
        let failure = pycc::take_failure();
        Ok(Simulation::wrap(inner, python, failure))
    }

    /// Simulated seconds reached.
    #[getter]
    fn now(&self) -> f64 {
        self.sim().now().as_secs_f64()
    }

    /// Simulated seconds at which the run ends.
    #[getter]
    fn end(&self) -> f64 {
        self.sim().end().as_secs_f64()
    }

    /// True once the run reached its end.
    #[getter]
    fn done(&self) -> bool {
        self.sim().is_done()
    }

    /// Why the run stopped before the scenario's end (its packet log reached
    /// the limit, or a Python congestion control failed), or `None`.
    #[getter]
    fn stopped(&self) -> Option<String> {
        self.failure
            .clone()
            .or_else(|| self.sim().stopped().map(str::to_string))
    }

    /// Lowers the packet log's row limit (for tests: the real one takes
    /// millions of packets to reach).
    fn _set_log_limit(&mut self, rows: usize) {
        self.sim_mut().set_log_limit(rows);
    }

    /// Runs every event up to `t` seconds (capped at the end), without the
    /// GIL unless a flow runs a Python algorithm. After a Python algorithm
    /// failed, does nothing more (`stopped` says why). A `KeyboardInterrupt`
    /// raised in a Python algorithm's method (Ctrl-C arrives there while it
    /// runs) is no failure of the algorithm: the run stops within a few
    /// thousand events and this raises `KeyboardInterrupt`, as Ctrl-C
    /// between two steps does; what was simulated is kept.
    fn run_until(&mut self, py: Python<'_>, t: f64) -> PyResult<()> {
        let until = seconds_to_instant(t)?;
        if self.failure.is_some() {
            return Ok(());
        }
        let python = self.python;
        let inner = self.sim_mut();
        if python {
            inner.run_until(until);
            self.failure = pycc::take_failure();
            if pycc::take_interrupt() {
                return Err(PyKeyboardInterrupt::new_err(()));
            }
        } else {
            py.detach(|| inner.run_until(until));
        }
        Ok(())
    }

    /// Runs every event before the instant `nanos` nanoseconds (capped at
    /// the end): a handoff moved to that instant on a fork then runs first
    /// at it, as in a fresh run.
    fn run_before(&mut self, py: Python<'_>, nanos: u64) -> PyResult<()> {
        if nanos == 0 {
            return Ok(());
        }
        let until = Instant::from_nanos(nanos - 1);
        if self.failure.is_some() {
            return Ok(());
        }
        let inner = self.sim_mut();
        py.detach(|| inner.run_until(until));
        Ok(())
    }

    /// A copy of the simulation at the instant it reached, continuing
    /// independently (without the captures). Raises `ValueError` naming a
    /// flow whose congestion control cannot be copied (a Python one).
    fn fork(&self) -> PyResult<Simulation> {
        if self.python {
            let sim = self.sim();
            let f = sim.scenario().flows.iter();
            let names: Vec<&str> = f
                .filter(|f| pycc::is_python(f.cc.name()))
                .map(|f| f.cc.name())
                .collect();
            return Err(PyValueError::new_err(format!(
                "congestion control \"{}\" is a Python algorithm, which cannot be copied, so \
                 the simulation cannot be forked",
                names.join("\", \"")
            )));
        }
        let inner = self.sim().fork().map_err(PyValueError::new_err)?;
        Ok(Simulation::wrap(inner, false, self.failure.clone()))
    }

    /// Moves the scenario's handoff `index` to `nanos` nanoseconds (both its
    /// instant and the new one after now; see
    /// `wavelab_sim::Simulation::set_handoff_at`). Raises `ValueError`
    /// saying why a move cannot be made.
    fn set_handoff_at(&mut self, index: usize, nanos: u64) -> PyResult<()> {
        self.sim_mut()
            .set_handoff_at(index, wavelab_tcp::Duration::from_nanos(nanos))
            .map_err(PyValueError::new_err)
    }

    /// Starts capturing `target` (`flow:NAME`, `link:NAME[:forward|:reverse]`
    /// or a bare flow or link name) into the pcap file `path`, from the
    /// current simulated time on. Raises `ValueError` for a target that names
    /// nothing and `OSError` if the file cannot be created.
    fn add_capture(&mut self, target: &str, path: &str) -> PyResult<()> {
        let file = std::fs::File::create(path).map_err(|e| os_error(&e, path))?;
        let out = std::io::BufWriter::with_capacity(1 << 20, file);
        self.sim_mut()
            .add_capture(target, Box::new(out))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Flushes every capture; returns one dict per capture, in the order they
    /// were added: `target`, `packets`, `bytes`, or `target`, `errno`,
    /// `error` for a capture a write error (a full disk) stopped.
    fn finish_captures<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        capture_results(py, self.sim_mut().finish_captures())
    }

    /// Figures about the run: simulated seconds, events, packet hops, peak packets.
    fn run_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.sim().results().run;
        let d = PyDict::new(py);
        d.set_item("simulated", r.simulated.as_secs_f64())?;
        d.set_item("events", r.events)?;
        d.set_item("packet_hops", r.packet_hops)?;
        d.set_item("peak_packets", r.peak_packets)?;
        // every flow's RTT samples together (the flows table has each flow's)
        d.set_item("rtt_samples", r.rtts.count())?;
        d.set_item("rtt_mean", r.rtts.mean_secs())?;
        for (name, q) in [("rtt_p50", 0.5), ("rtt_p95", 0.95), ("rtt_p99", 0.99)] {
            d.set_item(name, r.rtts.quantile_secs(q))?;
        }
        Ok(d)
    }

    /// The results so far: a dict of tables, each a list of
    /// `(name, kind, data, labels)` columns. Numeric data are little-endian
    /// `bytes` (`kind` is the numpy dtype); strings are lists; categories are
    /// `uint8` codes with their labels.
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        results_to_py(py, &self.sim().results())
    }
}

impl Simulation {
    fn wrap(inner: wavelab_sim::Simulation, python: bool, failure: Option<String>) -> Self {
        LIVE.fetch_add(1, Ordering::Relaxed);
        Simulation {
            inner: Mutex::new(inner),
            python,
            failure,
        }
    }

    /// The engine, for reading (a panic in an earlier call leaves the
    /// mutex poisoned; the engine is read all the same, as it was before
    /// the mutex).
    fn sim(&self) -> MutexGuard<'_, wavelab_sim::Simulation> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The engine, for changing (no lock: `&mut self` is exclusive).
    fn sim_mut(&mut self) -> &mut wavelab_sim::Simulation {
        self.inner.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Simulation {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How many simulations have their state allocated in this process: made
/// and not yet freed, whichever thread dropped them (a check that runs on
/// a cluster's workers leak nothing).
#[pyfunction]
fn live_simulations() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// A run's tables as a dict of [`table_to_py`] tables by name.
pub(crate) fn results_to_py<'py>(
    py: Python<'py>,
    r: &wavelab_sim::Results,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (name, table) in [
        ("series", &r.series),
        ("queues", &r.queues),
        ("flows", &r.flows),
        ("links", &r.links),
        ("packets", &r.packets),
        ("handovers", &r.handovers),
        ("handoffs", &r.handoffs),
        ("notifications", &r.notifications),
        ("subflows", &r.subflows),
        ("rtt_distribution", &r.rtt_distribution),
    ] {
        out.set_item(name, table_to_py(py, table)?)?;
    }
    Ok(out)
}

/// What each finished capture wrote, or the error that stopped it, as dicts
/// (`target`, `packets`, `bytes`, or `target`, `errno`, `error`).
pub(crate) fn capture_results<'py>(
    py: Python<'py>,
    done: impl IntoIterator<Item = (String, std::io::Result<wavelab_sim::CaptureStats>)>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut out = Vec::new();
    for (label, r) in done {
        let d = PyDict::new(py);
        d.set_item("target", label)?;
        match r {
            Ok(s) => {
                d.set_item("packets", s.packets)?;
                d.set_item("bytes", s.bytes)?;
            }
            Err(e) => {
                d.set_item("errno", e.raw_os_error().unwrap_or(0))?;
                d.set_item("error", e.to_string())?;
            }
        }
        out.push(d);
    }
    Ok(out)
}

/// An `OSError(errno, message, filename)` from an I/O error.
pub(crate) fn os_error(e: &std::io::Error, what: &str) -> PyErr {
    let errno = e.raw_os_error().unwrap_or(0);
    PyOSError::new_err((errno, e.to_string(), what.to_string()))
}

fn le_bytes<T: Copy, const N: usize>(v: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * N);
    for &x in v {
        out.extend_from_slice(&f(x));
    }
    out
}

/// A table as Python reads it: per column (name, kind, little-endian buffer
/// or list of str, category labels or None, validity or None), the validity
/// one byte per row (1: a value, 0: a null) for a nullable column.
pub(crate) fn table_to_py<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyList>> {
    let cols = PyList::empty(py);
    for c in &t.columns {
        let valid = match &c.valid {
            Some(v) => {
                let b: Vec<u8> = v.iter().map(|&x| x as u8).collect();
                PyBytes::new(py, &b).into_any()
            }
            None => py.None().into_bound(py),
        };
        let none = py.None().into_bound(py);
        let (kind, data, labels): (&str, Bound<'py, PyAny>, Bound<'py, PyAny>) = match &c.data {
            ColumnData::F64(v) => (
                "<f8",
                PyBytes::new(py, &le_bytes(v, f64::to_le_bytes)).into_any(),
                none,
            ),
            ColumnData::U64(v) => (
                "<u8",
                PyBytes::new(py, &le_bytes(v, u64::to_le_bytes)).into_any(),
                none,
            ),
            ColumnData::I64(v) => (
                "<i8",
                PyBytes::new(py, &le_bytes(v, i64::to_le_bytes)).into_any(),
                none,
            ),
            ColumnData::U32(v) => (
                "<u4",
                PyBytes::new(py, &le_bytes(v, u32::to_le_bytes)).into_any(),
                none,
            ),
            ColumnData::Bool(v) => {
                let b: Vec<u8> = v.iter().map(|&x| x as u8).collect();
                ("bool", PyBytes::new(py, &b).into_any(), none)
            }
            ColumnData::Str(v) => ("str", PyList::new(py, v)?.into_any(), none),
            ColumnData::Category { codes, labels } => (
                "category",
                PyBytes::new(py, codes).into_any(),
                PyList::new(py, labels)?.into_any(),
            ),
        };
        let item = PyTuple::new(
            py,
            [
                c.name.as_str().into_pyobject(py)?.into_any(),
                kind.into_pyobject(py)?.into_any(),
                data,
                labels,
                valid,
            ],
        )?;
        cols.append(item)?;
    }
    Ok(cols)
}

/// The unit of column `column` of a run's table `table` (`"s"`, `"B"`,
/// `"bit/s"`), or None: what the Parquet files carry in each field's
/// metadata.
#[pyfunction]
fn column_unit(table: &str, column: &str) -> Option<&'static str> {
    wavelab_sim::tables::units::unit(table, column)
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    wavelab_user_cc::register_all()
        .map_err(|e| pyo3::exceptions::PyImportError::new_err(format!("wavelab-user-cc: {e}")))?;
    m.add_class::<Simulation>()?;
    m.add_class::<pycc::Start>()?;
    m.add_class::<pycc::Ack>()?;
    m.add_class::<pycc::Congestion>()?;
    m.add_class::<pycc::Exit>()?;
    m.add_class::<pycc::PathChange>()?;
    m.add_function(wrap_pyfunction!(pycc::register_python_cc, m)?)?;
    m.add_class::<emulation::Emulation>()?;
    m.add_function(wrap_pyfunction!(emulation::normalize_emulation, m)?)?;
    m.add_function(wrap_pyfunction!(emulation::emulation_unavailable, m)?)?;
    m.add_function(wrap_pyfunction!(emulation::kernel_congestion_controls, m)?)?;
    m.add_function(wrap_pyfunction!(emulation::emulation_cleanup, m)?)?;
    m.add_function(wrap_pyfunction!(emulation::terminate_with_parent, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(quantity, m)?)?;
    m.add_function(wrap_pyfunction!(rate_trace, m)?)?;
    m.add_function(wrap_pyfunction!(leo_plan, m)?)?;
    m.add_function(wrap_pyfunction!(mahimahi_trace, m)?)?;
    m.add_function(wrap_pyfunction!(column_unit, m)?)?;
    m.add_function(wrap_pyfunction!(live_simulations, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // a hash of the simulator's sources and the compiler (build.rs)
    m.add("build_id", env!("WAVELAB_BUILD_ID"))?;
    Ok(())
}
