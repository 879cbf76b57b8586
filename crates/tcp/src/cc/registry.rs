//! Congestion controls registered under a name at run time: the way in for
//! your own algorithm (docs/custom-cc.md).
//!
//! A registered algorithm is used from a scenario exactly as a built-in one,
//! by name (`cc = "vegas"`) or as a table with its parameters
//! (`cc = { algorithm = "vegas", alpha = 2 }`); [`CcConfig`] holds it as
//! [`CcConfig::Custom`] and builds it into [`Cc::Custom`]. The parameters
//! are checked when the scenario is loaded ([`Factory::check`]), so a bad one
//! is an error naming it before any run starts.
//!
//! Rust algorithms register with [`register`] (parameters through serde,
//! see [`CcParams`]); the Python package registers Python classes through
//! the same table with [`register_factory`].

use super::{is_builtin, Cc, CcConfig, CongestionControl, WindowStart, ALGORITHMS};
use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// An algorithm's parameters as written in a scenario: the table's entries
/// other than `algorithm`.
pub type Params = serde_json::Map<String, serde_json::Value>;

/// What a registered name builds.
pub trait Factory: Send + Sync {
    /// Checks the parameters; the message starts with the parameter's name.
    /// Called when a scenario naming the algorithm is loaded.
    fn check(&self, params: &Params) -> Result<(), String>;
    /// Builds the algorithm for one connection. `params` passed
    /// [`Factory::check`].
    fn build(&self, params: &Params, start: &WindowStart) -> Box<dyn CongestionControl + Send>;
}

/// Parameters of a registered Rust algorithm: deserialised from the
/// scenario's table (unknown fields should be refused with
/// `#[serde(deny_unknown_fields)]`), then validated.
pub trait CcParams: DeserializeOwned + Send + Sync + 'static {
    /// Checks the values; the message starts with the parameter's name.
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

type BuildFn<P> = fn(&P, &WindowStart) -> Box<dyn CongestionControl + Send>;

struct Typed<P> {
    build: BuildFn<P>,
}

/// An algorithm's parameters from their JSON table; the message starts with
/// the path of the bad field.
pub(crate) fn parse_params<P: DeserializeOwned>(v: serde_json::Value) -> Result<P, String> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.inner().to_string()
        } else {
            format!("{path}: {}", e.inner())
        }
    })
}

fn parse<P: DeserializeOwned>(params: &Params) -> Result<P, String> {
    parse_params(serde_json::Value::Object(params.clone()))
}

impl<P: CcParams> Factory for Typed<P> {
    fn check(&self, params: &Params) -> Result<(), String> {
        parse::<P>(params)?.validate()
    }
    fn build(&self, params: &Params, start: &WindowStart) -> Box<dyn CongestionControl + Send> {
        // `check` accepted these parameters when the scenario was loaded
        let p = parse::<P>(params)
            .unwrap_or_else(|e| panic!("parameters accepted at load are refused now: {e}"));
        (self.build)(&p, start)
    }
}

struct Entry {
    name: &'static str,
    factory: Arc<dyn Factory>,
}

static REGISTRY: RwLock<BTreeMap<String, Entry>> = RwLock::new(BTreeMap::new());

fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_+".contains(c));
    if !ok {
        return Err(format!(
            "\"{name}\" is not a usable algorithm name: use lower-case letters, digits, '-', '_' or '+'"
        ));
    }
    if is_builtin(name) {
        return Err(format!(
            "\"{name}\" is a built-in algorithm: choose another name"
        ));
    }
    Ok(())
}

/// Registers `factory` under `name`. A name already registered is an error
/// unless `replace` (a notebook re-running the cell that defines it).
pub fn register_factory(
    name: &str,
    factory: Arc<dyn Factory>,
    replace: bool,
) -> Result<(), String> {
    check_name(name)?;
    let mut reg = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    let leaked = match reg.get(name) {
        Some(_) if !replace => {
            return Err(format!(
                "\"{name}\" is already registered (replace it explicitly, or choose another name)"
            ))
        }
        Some(e) => e.name,
        // one small allocation per distinct name, for the `&'static str`
        // names the tables carry
        None => Box::leak(name.to_string().into_boxed_str()),
    };
    reg.insert(
        name.to_string(),
        Entry {
            name: leaked,
            factory,
        },
    );
    Ok(())
}

/// Registers a Rust algorithm under `name`: its parameters `P` come from the
/// scenario's table, `build` makes one instance per connection.
///
/// ```
/// use wavelab_tcp::cc::registry::{register, CcParams};
/// use wavelab_tcp::cc::{CcConfig, CongestionControl};
/// # use wavelab_tcp::cc::{AckEvent, CongestionEvent};
/// # use wavelab_tcp::Instant;
/// #[derive(serde::Deserialize, Default)]
/// #[serde(deny_unknown_fields)]
/// struct FixedParams { segments: Option<u64> }
/// impl CcParams for FixedParams {}
/// #[derive(Debug)]
/// struct Fixed(u64);
/// impl CongestionControl for Fixed {
///     fn name(&self) -> &'static str { "fixed-doc" }
///     fn cwnd(&self) -> u64 { self.0 }
///     fn ssthresh(&self) -> u64 { u64::MAX }
///     fn on_ack(&mut self, _now: Instant, _ack: &AckEvent) {}
///     fn on_congestion(&mut self, _now: Instant, _e: &CongestionEvent) {}
/// }
/// register::<FixedParams>("fixed-doc", |p, start| {
///     Box::new(Fixed(p.segments.unwrap_or(10) * start.mss as u64))
/// })
/// .unwrap();
/// let cfg: CcConfig = serde_json::from_str(r#"{"algorithm": "fixed-doc", "segments": 4}"#).unwrap();
/// assert_eq!(cfg.build(1000, 10, None, 2).cwnd(), 4000);
/// ```
pub fn register<P: CcParams>(name: &str, build: BuildFn<P>) -> Result<(), String> {
    register_factory(name, Arc::new(Typed { build }), false)
}

/// The names registered so far, sorted.
pub fn registered() -> Vec<&'static str> {
    let reg = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
    reg.values().map(|e| e.name).collect()
}

fn lookup(name: &str) -> Option<(&'static str, Arc<dyn Factory>)> {
    let reg = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
    reg.get(name).map(|e| (e.name, e.factory.clone()))
}

/// A registered algorithm as a scenario names it: its name and parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomConfig {
    name: &'static str,
    params: Params,
}

impl CustomConfig {
    /// The registered algorithm `name` with `params`, checked; `None` if
    /// nothing is registered under `name`.
    pub(crate) fn parse(name: &str, params: serde_json::Value) -> Option<Result<Self, String>> {
        let (name, factory) = lookup(name)?;
        let params = match params {
            serde_json::Value::Object(m) => m,
            other => return Some(Err(format!("{other} is not a table of parameters"))),
        };
        Some(
            factory
                .check(&params)
                .map(|()| CustomConfig { name, params }),
        )
    }

    /// The algorithm's registered name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The parameters given in the scenario.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Builds the algorithm for one connection.
    ///
    /// # Panics
    /// If the name was unregistered since the scenario was loaded (nothing
    /// in wavelab unregisters).
    pub(crate) fn build(&self, start: &WindowStart) -> Cc {
        let (_, factory) = lookup(self.name)
            .unwrap_or_else(|| panic!("algorithm \"{}\" is no longer registered", self.name));
        Cc::Custom(factory.build(&self.params, start))
    }
}

impl Serialize for CustomConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.params.len() + 1))?;
        m.serialize_entry("algorithm", self.name)?;
        for (k, v) in &self.params {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl CcConfig {
    /// Every algorithm name a scenario may use now: the built-ins, then the
    /// registered ones.
    pub fn names() -> Vec<&'static str> {
        let mut v = ALGORITHMS.to_vec();
        v.extend(registered());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{AckEvent, CongestionEvent};
    use crate::Instant;

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct P {
        #[serde(default = "ten")]
        segments: u64,
    }
    fn ten() -> u64 {
        10
    }
    impl CcParams for P {
        fn validate(&self) -> Result<(), String> {
            if self.segments == 0 {
                return Err("segments: must be at least 1".into());
            }
            Ok(())
        }
    }
    #[derive(Debug)]
    struct Fixed(u64);
    impl CongestionControl for Fixed {
        fn name(&self) -> &'static str {
            "fixed-test"
        }
        fn cwnd(&self) -> u64 {
            self.0
        }
        fn ssthresh(&self) -> u64 {
            u64::MAX
        }
        fn on_ack(&mut self, _now: Instant, _ack: &AckEvent) {}
        fn on_congestion(&mut self, _now: Instant, _e: &CongestionEvent) {}
    }
    fn build(p: &P, start: &WindowStart) -> Box<dyn CongestionControl + Send> {
        Box::new(Fixed(p.segments * start.mss as u64))
    }

    #[test]
    fn a_registered_name_is_used_like_a_built_in_one() {
        register::<P>("fixed-test", build).unwrap();
        assert!(registered().contains(&"fixed-test"));
        assert!(CcConfig::names().contains(&"fixed-test"));
        let c: CcConfig = serde_json::from_str("\"fixed-test\"").unwrap();
        assert_eq!(c.name(), "fixed-test");
        assert_eq!(c.build(1000, 10, None, 2).cwnd(), 10_000);
        let c: CcConfig =
            serde_json::from_str(r#"{"algorithm": "fixed-test", "segments": 3}"#).unwrap();
        assert_eq!(c.build(1000, 10, None, 2).cwnd(), 3000);
        // the normalised form reads back to the same configuration
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(text, r#"{"algorithm":"fixed-test","segments":3}"#);
        assert_eq!(serde_json::from_str::<CcConfig>(&text).unwrap(), c);
    }

    #[test]
    fn bad_parameters_and_names_are_errors_that_name_them() {
        register::<P>("fixed-test2", build).unwrap();
        let e = serde_json::from_str::<CcConfig>(r#"{"algorithm": "fixed-test2", "segments": 0}"#)
            .unwrap_err();
        assert!(
            e.to_string().contains("segments: must be at least 1"),
            "{e}"
        );
        let e = serde_json::from_str::<CcConfig>(r#"{"algorithm": "fixed-test2", "bogus": 0}"#)
            .unwrap_err();
        assert!(e.to_string().contains("unknown field `bogus`"), "{e}");
        let e = register::<P>("fixed-test2", build).unwrap_err();
        assert!(e.contains("already registered"), "{e}");
        let e = register::<P>("reno", build).unwrap_err();
        assert!(e.contains("built-in"), "{e}");
        let e = register::<P>("My Algo", build).unwrap_err();
        assert!(e.contains("not a usable algorithm name"), "{e}");
        // an unknown name lists the registered ones too
        let e = serde_json::from_str::<CcConfig>("\"vegas-nothing\"").unwrap_err();
        assert!(e.to_string().contains("fixed-test2"), "{e}");
    }
}
