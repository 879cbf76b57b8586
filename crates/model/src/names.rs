//! Names in a scenario: the scenario's, the links', the nodes' and the
//! flows'. A name is a label (it appears in tables, plots, messages and
//! capture targets), never a path: the Python layer maps the scenario's name
//! to a safe directory name of its own. What a label may hold:
//!
//! * at most [`MAX_NAME_CHARS`] characters;
//! * no control characters (NUL, line breaks, tabs, escape sequences...),
//!   which would corrupt messages, tables and terminals;
//! * not empty, where one is given (a link's or flow's name; the scenario's
//!   name may be empty: it then defaults to the file's name).
//!
//! Flow names must be unique once replicas are expanded (`name#0`,
//! `name#1`, ... for `count > 1`; `flow<i>` for an unnamed flow), so that
//! per-flow columns and results can never collide. Link names must be unique
//! too (checked with the links).

/// The longest name, in characters.
pub const MAX_NAME_CHARS: usize = 128;
