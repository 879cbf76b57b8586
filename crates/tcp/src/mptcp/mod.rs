//! Multipath TCP (RFC 8684, MPTCP v1), sans-IO: the data level of a
//! connection whose subflows are the crate's ordinary [`crate::Sender`] and
//! [`crate::Receiver`].
//!
//! One concern per module:
//! * [`mapping`]: DSS mappings, subflow sequence space to data sequence
//!   space (RFC 8684 section 3.3.1);
//! * [`reassembly`]: the receiver's connection-level reordering and the
//!   sender's data-ACK bookkeeping (sections 3.3 and 3.3.2);
//! * [`scheduler`]: lowest-RTT-first, round-robin and redundant, with the
//!   backup rule of section 3.3.8;
//! * [`coupled`]: LIA (RFC 6356 section 3), OLIA and BALIA;
//! * [`connection`]: the connection, reinjection (section 3.3.6) and the
//!   DATA_FIN (section 3.3.3).
//!
//! The handshakes (MP_CAPABLE, MP_JOIN, section 3.1 and 3.2) are not
//! modelled byte by byte: a driver opens the first subflow, and the others
//! once the first is established (an MP_JOIN needs the keys the
//! MP_CAPABLE exchange gave). Keys, tokens and HMACs are left out, and the
//! options are not on the wire of captures yet. docs/algorithms/mptcp.md
//! has the design, the choices and the measured results.

pub mod connection;
pub mod coupled;
pub mod mapping;
pub mod reassembly;
pub mod scheduler;

pub use connection::{Connection, ConnectionConfig, Endpoints, SubflowStats};
pub use scheduler::Scheduler;

use serde::{Deserialize, Serialize};

/// How the subflows' congestion windows relate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coupling {
    /// Each subflow runs the flow's algorithm on its own.
    #[default]
    Uncoupled,
    /// The Linked Increases Algorithm (RFC 6356) over Reno-family windows.
    Lia,
    /// The Opportunistic Linked Increases Algorithm (Khalili et al., ToN
    /// 2013).
    Olia,
    /// The Balanced Linked Adaptation algorithm (Peng et al., ToN 2016).
    Balia,
}

impl Coupling {
    /// Every coupling's name, as scenarios spell it.
    pub const NAMES: [&'static str; 4] = ["uncoupled", "lia", "olia", "balia"];

    /// The name, as scenarios spell it.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// Where the algorithm is defined.
    pub fn source(self) -> &'static str {
        match self {
            Coupling::Uncoupled => "-",
            Coupling::Lia => "RFC 6356",
            Coupling::Olia => "Khalili et al., ToN 2013",
            Coupling::Balia => "Peng et al., ToN 2016",
        }
    }
}
