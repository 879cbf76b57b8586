//! Congestion controls written in Python: a class registered under a name
//! (`wavelab.register_cc`), whose methods the sender calls on every ACK,
//! congestion event and timer, through the same registry as the Rust
//! algorithms (`wavelab_tcp::cc::registry`), so a scenario names it like any
//! other (`cc = "my-vegas"`). docs/custom-cc.md describes the class's
//! contract and what it costs.
//!
//! After each call the sender reads the instance's `cwnd` and `ssthresh`
//! (and `pacing_rate`, `timer` where the class has them) once and keeps
//! them, so the per-packet path never enters Python. A call that raises, or
//! leaves a value that is not a number of bytes, stops the algorithm: the
//! first failure is kept with the class, the method, the simulated time and
//! the traceback, the simulation stops at the end of its current step
//! (`Simulation::stopped`), and what was computed up to there is kept.

use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, Mutex};
use wavelab_tcp::cc::registry::{register_factory, Factory, Params};
use wavelab_tcp::cc::{
    AckEvent, CongestionControl, CongestionEvent, CongestionKind, PathInfo, RecoveryExit,
    WindowStart,
};
use wavelab_tcp::{Duration, Instant, Rate};

thread_local! {
    /// The first failure of a Python algorithm on this thread since it was
    /// last taken.
    static FAILURE: RefCell<Option<String>> = const { RefCell::new(None) };
    /// True once a method raised `KeyboardInterrupt` (the user's Ctrl-C, or
    /// SIGTERM turned into it), until taken.
    static INTERRUPTED: Cell<bool> = const { Cell::new(false) };
}

/// True if a Python algorithm's method was interrupted since the last
/// [`take_interrupt`] (the simulation's interrupt check).
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.with(Cell::get)
}

/// Whether a Python algorithm's method was interrupted, and clears it.
pub(crate) fn take_interrupt() -> bool {
    INTERRUPTED.with(|i| i.replace(false))
}

/// Names registered for Python classes: a simulation using one keeps the
/// interpreter while it runs instead of releasing it.
static PYTHON_NAMES: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Takes the first failure of a Python algorithm since the last call.
pub(crate) fn take_failure() -> Option<String> {
    FAILURE.with(|f| f.borrow_mut().take())
}

fn fail(message: String) {
    FAILURE.with(|f| {
        let mut f = f.borrow_mut();
        if f.is_none() {
            *f = Some(message);
        }
    });
}

/// True if `name` is a Python algorithm.
pub(crate) fn is_python(name: &str) -> bool {
    PYTHON_NAMES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(name)
}

/// What the constructor gets first: the connection's start.
#[pyclass(module = "wavelab._native", frozen, get_all)]
pub(crate) struct Start {
    /// The sender's MSS in bytes.
    mss: u32,
    /// The initial window in segments.
    initial_cwnd: u32,
    /// The initial ssthresh in bytes, `None` for unlimited.
    initial_ssthresh: Option<u64>,
}

/// An ACK that carried news, as `on_ack` gets it (times in seconds, sizes in
/// bytes; the fields of `wavelab_tcp::cc::AckEvent`).
#[pyclass(module = "wavelab._native", frozen, get_all)]
pub(crate) struct Ack {
    mss: u32,
    bytes_acked: u64,
    bytes_delivered: u64,
    prior_in_flight: u64,
    in_flight: u64,
    bytes_lost: u64,
    rtt: Option<f64>,
    srtt: Option<f64>,
    min_rtt: Option<f64>,
    state: &'static str,
    dupack: bool,
    cwnd_limited: bool,
    window_reduced: bool,
    snd_una: u64,
    snd_nxt: u64,
    /// RFC 5681's rule for loss-based windows: the ACK covers new data,
    /// outside fast recovery, not on the ACK that reduced the window, and
    /// the window (not the application) limits the sender.
    may_grow_window: bool,
}

/// A congestion event, as `on_congestion` gets it: `kind` is
/// `"fast_retransmit"`, `"rto"` or `"ecn"`; `repeated` is true for a
/// timeout of a segment the timer had already retransmitted (hold
/// ssthresh, RFC 5681 section 3.1).
#[pyclass(module = "wavelab._native", frozen, get_all)]
pub(crate) struct Congestion {
    kind: &'static str,
    repeated: bool,
    flight_size: u64,
    in_flight: u64,
    mss: u32,
}

/// The end of a fast recovery, as `on_recovery_exit` gets it.
#[pyclass(module = "wavelab._native", frozen, get_all)]
pub(crate) struct Exit {
    flight_size: u64,
    mss: u32,
    sack: bool,
}

/// A change of the path (a handover), as `on_path_change` gets it: the new
/// rate (bit/s) and one-way delay (s) where known.
#[pyclass(module = "wavelab._native", frozen, get_all)]
pub(crate) struct PathChange {
    rate: Option<f64>,
    delay: Option<f64>,
}

fn secs(d: Option<Duration>) -> Option<f64> {
    d.map(|d| d.as_secs_f64())
}

/// A registered Python class.
struct PyFactory {
    name: &'static str,
    class: Py<PyAny>,
    class_name: String,
    metric_names: &'static [&'static str],
}

/// `Class.method raised Type: message (file, line N: code)`: the error and
/// the line of the user's code that raised it (the traceback's last frame).
fn describe(py: Python<'_>, e: &PyErr, what: &str) -> String {
    let mut s = format!("{what} raised {e}");
    let frame = e.traceback(py).and_then(|tb| {
        let tb_mod = py.import(intern!(py, "traceback")).ok()?;
        let frames = tb_mod.call_method1(intern!(py, "extract_tb"), (tb,)).ok()?;
        let last = frames.get_item(-1).ok()?;
        let file: String = last.getattr("filename").ok()?.extract().ok()?;
        // relative to the working directory where it is below it
        let file = std::env::current_dir()
            .ok()
            .and_then(|cwd| {
                std::path::Path::new(&file)
                    .strip_prefix(cwd)
                    .ok()
                    .map(|p| p.display().to_string())
            })
            .unwrap_or(file);
        let line: u64 = last.getattr("lineno").ok()?.extract().ok()?;
        let code: String = last
            .getattr("line")
            .ok()
            .and_then(|l| l.extract().ok())
            .unwrap_or_default();
        Some(if code.is_empty() {
            format!(" ({file}, line {line})")
        } else {
            format!(" ({file}, line {line}: {})", code.trim())
        })
    });
    s.push_str(&frame.unwrap_or_default());
    s
}

impl PyFactory {
    fn construct(
        &self,
        py: Python<'_>,
        params: &Params,
        start: &WindowStart,
    ) -> PyResult<Py<PyAny>> {
        let json = py.import(intern!(py, "json"))?;
        let text = serde_json::Value::Object(params.clone()).to_string();
        let kwargs = json.call_method1(intern!(py, "loads"), (text,))?;
        let kwargs = kwargs.cast_into::<PyDict>()?;
        let start = Start {
            mss: start.mss,
            initial_cwnd: start.initial_cwnd,
            initial_ssthresh: start.initial_ssthresh,
        };
        Ok(self.class.bind(py).call((start,), Some(&kwargs))?.unbind())
    }
}

impl Factory for PyFactory {
    fn check(&self, params: &Params) -> Result<(), String> {
        let start = WindowStart {
            mss: 1448,
            initial_cwnd: 10,
            initial_ssthresh: None,
            abc_limit: 2,
        };
        Python::attach(|py| {
            let obj = self
                .construct(py, params, &start)
                .map_err(|e| describe(py, &e, &format!("{}(...)", self.class_name)))?;
            PyCc::new(py, self, obj).map(|_| ())
        })
    }

    fn build(&self, params: &Params, start: &WindowStart) -> Box<dyn CongestionControl + Send> {
        Python::attach(|py| {
            let made = self
                .construct(py, params, start)
                .map_err(|e| describe(py, &e, &format!("{}(...)", self.class_name)))
                .and_then(|obj| PyCc::new(py, self, obj));
            match made {
                Ok(cc) => Box::new(cc),
                Err(message) => {
                    fail(format!("congestion control \"{}\": {message}", self.name));
                    Box::new(PyCc::failed(self, start))
                }
            }
        })
    }
}

/// The methods of a class, bound to one instance.
struct Methods {
    on_ack: Py<PyAny>,
    on_congestion: Py<PyAny>,
    on_timer: Option<Py<PyAny>>,
    on_recovery_exit: Option<Py<PyAny>>,
    on_established: Option<Py<PyAny>>,
    on_path_change: Option<Py<PyAny>>,
    set_mss: Option<Py<PyAny>>,
}

/// One connection's instance of a Python class.
struct PyCc {
    name: &'static str,
    class_name: String,
    obj: Option<Py<PyAny>>,
    methods: Option<Methods>,
    metric_names: &'static [&'static str],
    has_pacing: bool,
    has_timer: bool,
    cwnd: u64,
    ssthresh: u64,
    pacing: Option<Rate>,
    timer: Option<Instant>,
}

impl fmt::Debug for PyCc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PyCc")
            .field("class", &self.class_name)
            .field("cwnd", &self.cwnd)
            .field("ssthresh", &self.ssthresh)
            .field("failed", &self.obj.is_none())
            .finish()
    }
}

fn method(obj: &Bound<'_, PyAny>, name: &str) -> Option<Py<PyAny>> {
    obj.getattr(name)
        .ok()
        .filter(|m| m.is_callable())
        .map(Bound::unbind)
}

impl PyCc {
    fn new(py: Python<'_>, f: &PyFactory, obj: Py<PyAny>) -> Result<Self, String> {
        let o = obj.bind(py);
        let required = |name: &str| {
            method(o, name).ok_or_else(|| {
                format!(
                    "{} has no method {name}(self, now, event): a congestion control needs on_ack and on_congestion",
                    f.class_name
                )
            })
        };
        let methods = Methods {
            on_ack: required("on_ack")?,
            on_congestion: required("on_congestion")?,
            on_timer: method(o, "on_timer"),
            on_recovery_exit: method(o, "on_recovery_exit"),
            on_established: method(o, "on_established"),
            on_path_change: method(o, "on_path_change"),
            set_mss: method(o, "set_mss"),
        };
        let mut cc = PyCc {
            name: f.name,
            class_name: f.class_name.clone(),
            has_pacing: o.hasattr(intern!(py, "pacing_rate")).unwrap_or(false),
            has_timer: o.hasattr(intern!(py, "timer")).unwrap_or(false),
            obj: Some(obj),
            methods: Some(methods),
            metric_names: f.metric_names,
            cwnd: 0,
            ssthresh: u64::MAX,
            pacing: None,
            timer: None,
        };
        cc.read_state(py)
            .map_err(|e| format!("{}(...): {e}", f.class_name))?;
        Ok(cc)
    }

    /// An algorithm whose constructor failed: it holds the initial window
    /// until the simulation stops at the end of its step.
    fn failed(f: &PyFactory, start: &WindowStart) -> Self {
        PyCc {
            name: f.name,
            class_name: f.class_name.clone(),
            obj: None,
            methods: None,
            metric_names: f.metric_names,
            has_pacing: false,
            has_timer: false,
            cwnd: start.initial_cwnd as u64 * start.mss as u64,
            ssthresh: u64::MAX,
            pacing: None,
            timer: None,
        }
    }

    /// Reads `cwnd`, `ssthresh` (and `pacing_rate`, `timer`) from the instance.
    fn read_state(&mut self, py: Python<'_>) -> Result<(), String> {
        let Some(obj) = &self.obj else {
            return Ok(());
        };
        let o = obj.bind(py);
        let bytes = |name: &Bound<'_, pyo3::types::PyString>,
                     none: Option<u64>|
         -> Result<u64, String> {
            let v = o
                .getattr(name)
                .map_err(|_| format!("the instance has no attribute {name} (bytes)"))?;
            if v.is_none() {
                return none.ok_or_else(|| format!("{name} = None: it must be a number of bytes"));
            }
            match v.extract::<f64>() {
                Ok(x) if x.is_finite() && x >= 1.0 => Ok(x as u64),
                _ => Err(format!(
                    "{name} = {} is not a number of bytes of at least 1",
                    v.repr().map(|r| r.to_string()).unwrap_or_default()
                )),
            }
        };
        self.cwnd = bytes(intern!(py, "cwnd"), None)?;
        self.ssthresh = bytes(intern!(py, "ssthresh"), Some(u64::MAX))?;
        if self.has_pacing {
            let v = o
                .getattr(intern!(py, "pacing_rate"))
                .map_err(|e| e.to_string())?;
            self.pacing = if v.is_none() {
                None
            } else {
                match v.extract::<f64>() {
                    Ok(x) if x.is_finite() && x >= 1.0 => Some(Rate::from_bps(x as u64)),
                    _ => {
                        return Err(format!(
                            "pacing_rate = {} is not a rate in bit/s of at least 1, or None",
                            v.repr().map(|r| r.to_string()).unwrap_or_default()
                        ))
                    }
                }
            };
        }
        if self.has_timer {
            let v = o.getattr(intern!(py, "timer")).map_err(|e| e.to_string())?;
            self.timer = if v.is_none() {
                None
            } else {
                match v.extract::<f64>() {
                    Ok(x) if x.is_finite() && x >= 0.0 => {
                        Some(Instant::from_nanos((x * 1e9).round() as u64))
                    }
                    _ => {
                        return Err(format!(
                            "timer = {} is not a time in seconds, or None",
                            v.repr().map(|r| r.to_string()).unwrap_or_default()
                        ))
                    }
                }
            };
        }
        Ok(())
    }

    /// Calls `method(now, event)`, leaving out `now` or `event` where it is
    /// `None` (`set_mss(mss)`, `on_timer(now)`: the signatures
    /// docs/custom-cc.md lists), and reads the state back; the first failure
    /// stops the algorithm.
    fn call(
        &mut self,
        now: Option<Instant>,
        name: &str,
        pick: fn(&Methods) -> Option<&Py<PyAny>>,
        event: impl FnOnce(Python<'_>) -> PyResult<Option<Py<PyAny>>>,
    ) {
        if self.methods.as_ref().and_then(pick).is_none() {
            return;
        }
        let t = now.map_or(0.0, |n| n.as_secs_f64());
        let at = now.map_or(String::new(), |_| format!(" at {t:.6} s"));
        let outcome = Python::attach(|py| {
            let m = match self.methods.as_ref().and_then(pick) {
                Some(m) => m.clone_ref(py),
                None => return Ok(()),
            };
            let r = event(py).and_then(|ev| {
                let m = m.bind(py);
                match (now, ev) {
                    (Some(_), Some(ev)) => m.call1((t, ev)),
                    (Some(_), None) => m.call1((t,)),
                    (None, Some(ev)) => m.call1((ev,)),
                    (None, None) => m.call0(),
                }
                .map(|_| ())
            });
            match r {
                Ok(()) => self
                    .read_state(py)
                    .map_err(|e| format!("{}.{name}{at} left {e}", self.class_name)),
                // the user's interruption, not the algorithm's failure: the
                // run stops (`interrupted`) and the algorithm stays as it is
                Err(e) if e.is_instance_of::<PyKeyboardInterrupt>(py) => {
                    INTERRUPTED.with(|i| i.set(true));
                    Ok(())
                }
                Err(e) => Err(describe(py, &e, &format!("{}.{name}{at}", self.class_name))),
            }
        });
        if let Err(message) = outcome {
            fail(format!("congestion control \"{}\": {message}", self.name));
            self.obj = None;
            self.methods = None;
            self.timer = None;
        }
    }
}

/// `value` as the event argument of a method call.
fn object<T: pyo3::PyClass + Into<pyo3::PyClassInitializer<T>>>(
    py: Python<'_>,
    value: T,
) -> PyResult<Option<Py<PyAny>>> {
    Ok(Some(Py::new(py, value)?.into_any()))
}

impl CongestionControl for PyCc {
    fn name(&self) -> &'static str {
        self.name
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn pacing_rate(&self) -> Option<Rate> {
        self.pacing
    }
    fn timer(&self) -> Option<Instant> {
        self.timer
    }
    fn uses_rate_samples(&self) -> bool {
        false
    }
    fn set_mss(&mut self, mss: u32) {
        self.call(
            None,
            "set_mss",
            |m| m.set_mss.as_ref(),
            |py| Ok(Some(mss.into_pyobject(py)?.into_any().unbind())),
        );
    }
    fn on_established(&mut self, now: Instant, rtt: Option<Duration>) {
        self.call(
            Some(now),
            "on_established",
            |m| m.on_established.as_ref(),
            |py| Ok(Some(secs(rtt).into_pyobject(py)?.into_any().unbind())),
        );
    }
    fn on_timer(&mut self, now: Instant) {
        self.call(Some(now), "on_timer", |m| m.on_timer.as_ref(), |_| Ok(None));
        // A deadline left at or before the instant it fired would fire again
        // at once, forever: the run would never end. The class's error, named.
        if let Some(t) = self.timer.filter(|&t| t <= now) {
            fail(format!(
                "congestion control \"{}\": {}.on_timer left timer = {} s, not after the \
                 instant it fired ({} s): set the next deadline or None",
                self.name,
                self.class_name,
                t.as_secs_f64(),
                now.as_secs_f64()
            ));
            self.obj = None;
            self.methods = None;
            self.timer = None;
        }
    }
    fn on_ack(&mut self, now: Instant, a: &AckEvent) {
        let ack = Ack {
            mss: a.mss,
            bytes_acked: a.bytes_acked,
            bytes_delivered: a.bytes_delivered,
            prior_in_flight: a.prior_in_flight,
            in_flight: a.in_flight,
            bytes_lost: a.bytes_lost,
            rtt: secs(a.rtt),
            srtt: secs(a.srtt),
            min_rtt: secs(a.min_rtt),
            state: a.state.name(),
            dupack: a.dupack,
            cwnd_limited: a.cwnd_limited,
            window_reduced: a.window_reduced,
            snd_una: a.snd_una,
            snd_nxt: a.snd_nxt,
            may_grow_window: a.may_grow_window(),
        };
        self.call(
            Some(now),
            "on_ack",
            |m| Some(&m.on_ack),
            |py| object(py, ack),
        );
    }
    fn on_congestion(&mut self, now: Instant, e: &CongestionEvent) {
        let (kind, repeated) = match e.kind {
            CongestionKind::FastRetransmit => ("fast_retransmit", false),
            CongestionKind::Rto { repeated } => ("rto", repeated),
            CongestionKind::Ecn => ("ecn", false),
        };
        let ev = Congestion {
            kind,
            repeated,
            flight_size: e.flight_size,
            in_flight: e.in_flight,
            mss: e.mss,
        };
        self.call(
            Some(now),
            "on_congestion",
            |m| Some(&m.on_congestion),
            |py| object(py, ev),
        );
    }
    fn on_recovery_exit(&mut self, now: Instant, x: &RecoveryExit) {
        let ev = Exit {
            flight_size: x.flight_size,
            mss: x.mss,
            sack: x.sack,
        };
        self.call(
            Some(now),
            "on_recovery_exit",
            |m| m.on_recovery_exit.as_ref(),
            |py| object(py, ev),
        );
    }
    fn on_path_change(&mut self, now: Instant, p: &PathInfo) {
        let ev = PathChange {
            rate: p.rate.map(|r| r.as_bps() as f64),
            delay: secs(p.delay),
        };
        self.call(
            Some(now),
            "on_path_change",
            |m| m.on_path_change.as_ref(),
            |py| object(py, ev),
        );
    }
    fn metric_names(&self) -> &'static [&'static str] {
        self.metric_names
    }
    fn metrics(&self, out: &mut [f64]) {
        out.fill(f64::NAN);
        let Some(obj) = &self.obj else {
            return;
        };
        Python::attach(|py| {
            let o = obj.bind(py);
            for (slot, name) in out.iter_mut().zip(self.metric_names) {
                let v = o.getattr(*name);
                match v.as_ref().map(|v| (v.is_none(), v.extract::<f64>())) {
                    Ok((true, _)) => {}
                    Ok((false, Ok(x))) => *slot = x,
                    _ => {
                        let what = match v {
                            Ok(v) => format!(
                                "= {} is not a number",
                                v.repr().map(|r| r.to_string()).unwrap_or_default()
                            ),
                            Err(_) => "is missing".to_string(),
                        };
                        fail(format!(
                            "congestion control \"{}\": {}.{name} (listed in metrics) {what}",
                            self.name, self.class_name
                        ));
                    }
                }
            }
        });
    }
}

/// Registers the Python class `cls` as the congestion control `name`, its
/// attributes `metrics` (names) in the time series as `cc_<name>` columns.
/// `replace` replaces an earlier registration of the same name.
#[pyfunction]
#[pyo3(signature = (name, cls, metrics, replace = false))]
pub(crate) fn register_python_cc(
    py: Python<'_>,
    name: &str,
    cls: Bound<'_, PyAny>,
    metrics: Vec<String>,
    replace: bool,
) -> PyResult<()> {
    let class_name = cls
        .getattr(intern!(py, "__qualname__"))
        .and_then(|n| n.extract::<String>())
        .unwrap_or_else(|_| "the class".to_string());
    for m in &metrics {
        let ok = !m.is_empty() && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(PyValueError::new_err(format!(
                "{class_name}.metrics: {m:?} is not a column name (letters, digits, _)"
            )));
        }
    }
    // one small allocation per registration, for the `&'static` names the
    // time series carries
    let names: Vec<&'static str> = metrics
        .into_iter()
        .map(|m| &*Box::leak(m.into_boxed_str()))
        .collect();
    let factory = PyFactory {
        name: Box::leak(name.to_string().into_boxed_str()),
        class: cls.unbind(),
        class_name,
        metric_names: Box::leak(names.into_boxed_slice()),
    };
    register_factory(name, Arc::new(factory), replace).map_err(PyValueError::new_err)?;
    PYTHON_NAMES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_string());
    Ok(())
}
