//! Result tables: columns of plain vectors, handed to Python as buffers
//! without a Python object per sample, with digests for pinning and an
//! aligned text form for snapshots.
//!
//! * [`series`]: the per-flow time series and the queue series;
//! * [`log`]: the per-packet event log;
//! * `results`: everything a run produced ([`Results`]), with the record
//!   types and builders of the per-flow, per-link, per-handover and
//!   per-handoff tables;
//! * `summary`: [`Results::summary_text`], the summaries the pinned runs'
//!   snapshots compare.

pub mod log;
mod results;
pub mod series;
mod summary;
pub mod units;

pub use log::{event, kind_code, PacketEvent, PacketLog, KIND_NAMES, NO_KIND};
pub use results::{
    flow_table, handoff_table, handover_table, link_table, rtt_distribution, subflow_table,
    FlowCounters, FlowRecord, LinkDirectionRecord, LinkHandoverRecord, NodeHandoffRecord, Results,
    RunStats, SubflowRecord,
};

/// The values of one column.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    /// Floats (a value a driver cannot know is a null of a nullable column,
    /// [`Column::valid`]; NaN only where a computation gives no number).
    F64(Vec<f64>),
    /// Unsigned integers.
    U64(Vec<u64>),
    /// Signed integers.
    I64(Vec<i64>),
    /// Small unsigned integers.
    U32(Vec<u32>),
    /// Booleans.
    Bool(Vec<bool>),
    /// Strings.
    Str(Vec<String>),
    /// A categorical column: codes into `labels`.
    Category {
        /// Code of each row.
        codes: Vec<u8>,
        /// Label of each code.
        labels: Vec<String>,
    },
}

/// A type a column can be read as ([`Table::get`], [`Table::col`]).
pub trait ColumnType: Sized {
    /// The type's name in messages.
    const NAME: &'static str;
    /// The values of `data`, if it holds this type.
    fn of(data: &ColumnData) -> Option<&[Self]>;
}

macro_rules! column_type {
    ($t:ty, $variant:ident, $name:literal) => {
        impl ColumnType for $t {
            const NAME: &'static str = $name;
            fn of(data: &ColumnData) -> Option<&[Self]> {
                match data {
                    ColumnData::$variant(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
column_type!(f64, F64, "f64");
column_type!(u64, U64, "u64");
column_type!(i64, I64, "i64");
column_type!(u32, U32, "u32");
column_type!(bool, Bool, "bool");
column_type!(String, Str, "string");

impl ColumnData {
    /// The type's name in messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            ColumnData::F64(_) => "f64",
            ColumnData::U64(_) => "u64",
            ColumnData::I64(_) => "i64",
            ColumnData::U32(_) => "u32",
            ColumnData::Bool(_) => "bool",
            ColumnData::Str(_) => "string",
            ColumnData::Category { .. } => "category",
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            ColumnData::F64(v) => v.len(),
            ColumnData::U64(v) => v.len(),
            ColumnData::I64(v) => v.len(),
            ColumnData::U32(v) => v.len(),
            ColumnData::Bool(v) => v.len(),
            ColumnData::Str(v) => v.len(),
            ColumnData::Category { codes, .. } => codes.len(),
        }
    }
    /// True if there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// 64-bit FNV-1a.
pub(crate) struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// One FNV-1a step, taking `x` whole (a byte, or a digest folded in).
    pub(crate) fn mix(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x0100_0000_01b3);
    }
    fn byte(&mut self, b: u8) {
        self.mix(b as u64);
    }
    fn u64(&mut self, x: u64) {
        x.to_le_bytes().iter().for_each(|&b| self.byte(b));
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        b.iter().for_each(|&x| self.byte(x));
    }
}

/// A named column.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Values (a null row holds a filler: 0, or NaN for floats).
    pub data: ColumnData,
    /// Whether the column is nullable, and which rows hold a value: `None`
    /// for a column that always has one; for a nullable column, `true` for
    /// a value and `false` for a null (a value the driver cannot know).
    pub valid: Option<Vec<bool>>,
}

/// A type a nullable column holds ([`Table::push_nullable`]).
pub trait NullableType: ColumnType + Copy {
    /// What a null row holds in [`Column::data`].
    const FILLER: Self;
    /// The column data of these values.
    fn data(values: Vec<Self>) -> ColumnData;
}

macro_rules! nullable_type {
    ($t:ty, $variant:ident, $filler:expr) => {
        impl NullableType for $t {
            const FILLER: Self = $filler;
            fn data(values: Vec<Self>) -> ColumnData {
                ColumnData::$variant(values)
            }
        }
    };
}
nullable_type!(f64, F64, f64::NAN);
nullable_type!(u64, U64, 0);
nullable_type!(u32, U32, 0);

/// A table: columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// The columns, in display order.
    pub columns: Vec<Column>,
}

impl Table {
    /// Appends a column.
    pub fn push(&mut self, name: impl Into<String>, data: ColumnData) {
        debug_assert!(self
            .columns
            .first()
            .is_none_or(|c| c.data.len() == data.len()));
        self.columns.push(Column {
            name: name.into(),
            data,
            valid: None,
        });
    }

    /// Appends a nullable column: `None` is a null (a value the driver
    /// cannot know), written as a null to Arrow and Parquet.
    pub fn push_nullable<T: NullableType>(
        &mut self,
        name: impl Into<String>,
        values: impl IntoIterator<Item = Option<T>>,
    ) {
        let (data, valid): (Vec<T>, Vec<bool>) = values
            .into_iter()
            .map(|v| (v.unwrap_or(T::FILLER), v.is_some()))
            .unzip();
        self.push(name, T::data(data));
        self.columns.last_mut().expect("pushed").valid = Some(valid);
    }

    /// Which rows of column `name` hold a value (`None`: the column is not
    /// nullable, or absent).
    pub fn valid(&self, name: &str) -> Option<&[bool]> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .and_then(|c| c.valid.as_deref())
    }

    /// The column `name` of a type `T` as options, `None` at its nulls.
    pub fn options<T: ColumnType + Copy>(&self, name: &str) -> Vec<Option<T>> {
        let values = self.col::<T>(name);
        match self.valid(name) {
            Some(v) => values
                .iter()
                .zip(v)
                .map(|(&x, &ok)| ok.then_some(x))
                .collect(),
            None => values.iter().map(|&x| Some(x)).collect(),
        }
    }
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.data.len())
    }
    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&ColumnData> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.data)
    }
    /// The column `name` as values of type `T` (`f64`, `u64`, `i64`, `u32`,
    /// `bool` or `String`), if it exists with that type.
    pub fn get<T: ColumnType>(&self, name: &str) -> Option<&[T]> {
        self.column(name).and_then(T::of)
    }

    /// The column `name` as values of type `T`; panics with the columns
    /// there are if it is absent or of another type (for tests and tools
    /// that know the schema).
    pub fn col<T: ColumnType>(&self, name: &str) -> &[T] {
        self.get(name).unwrap_or_else(|| {
            let have: Vec<String> = self
                .columns
                .iter()
                .map(|c| format!("{} ({})", c.name, c.data.type_name()))
                .collect();
            panic!(
                "no {} column {name}; the columns are {}",
                T::NAME,
                have.join(", ")
            )
        })
    }

    /// The column `name` as text, one label per row: a categorical column
    /// decoded, or a string column; panics if it is neither.
    pub fn labels(&self, name: &str) -> Vec<&str> {
        match self.column(name) {
            Some(ColumnData::Category { codes, labels }) => {
                codes.iter().map(|&c| labels[c as usize].as_str()).collect()
            }
            Some(ColumnData::Str(v)) => v.iter().map(String::as_str).collect(),
            other => panic!("no categorical or string column {name}: {other:?}"),
        }
    }

    /// Any numeric column `name` as floats (integers and booleans
    /// converted); panics if it is absent or not numeric.
    pub fn numbers(&self, name: &str) -> Vec<f64> {
        match self.column(name) {
            Some(ColumnData::F64(v)) => v.clone(),
            Some(ColumnData::U64(v)) => v.iter().map(|&x| x as f64).collect(),
            Some(ColumnData::I64(v)) => v.iter().map(|&x| x as f64).collect(),
            Some(ColumnData::U32(v)) => v.iter().map(|&x| x as f64).collect(),
            Some(ColumnData::Bool(v)) => v.iter().map(|&x| x as u8 as f64).collect(),
            other => panic!("no numeric column {name}: {other:?}"),
        }
    }

    /// The float column `name` (panics if absent or of another type).
    pub fn f64s(&self, name: &str) -> &[f64] {
        self.col(name)
    }
    /// The u64 column `name` (panics if absent or of another type).
    pub fn u64s(&self, name: &str) -> &[u64] {
        self.col(name)
    }
    /// A fingerprint of the table's names and values (64-bit FNV-1a over
    /// every column name, type and value, floats by their bit patterns): equal
    /// tables give equal digests on every platform, so a run's results can
    /// be pinned by a few numbers. The nulls of an integer column are mixed
    /// in after its values (a column without nulls digests as it did before
    /// columns could have them); a float null holds NaN and digests as NaN,
    /// what such a value was before nulls existed.
    pub fn digest(&self) -> u64 {
        let mut h = Fnv::default();
        for c in &self.columns {
            h.bytes(c.name.as_bytes());
            match &c.data {
                ColumnData::F64(v) => {
                    h.u64(1);
                    v.iter().for_each(|x| h.u64(x.to_bits()));
                }
                ColumnData::U64(v) => {
                    h.u64(2);
                    v.iter().for_each(|&x| h.u64(x));
                }
                ColumnData::I64(v) => {
                    h.u64(3);
                    v.iter().for_each(|&x| h.u64(x as u64));
                }
                ColumnData::U32(v) => {
                    h.u64(4);
                    v.iter().for_each(|&x| h.u64(x as u64));
                }
                ColumnData::Bool(v) => {
                    h.u64(5);
                    v.iter().for_each(|&x| h.u64(x as u64));
                }
                ColumnData::Str(v) => {
                    h.u64(6);
                    v.iter().for_each(|x| h.bytes(x.as_bytes()));
                }
                ColumnData::Category { codes, labels } => {
                    h.u64(7);
                    labels.iter().for_each(|x| h.bytes(x.as_bytes()));
                    codes.iter().for_each(|&x| h.u64(x as u64));
                }
            }
            if let (Some(valid), false) = (&c.valid, matches!(c.data, ColumnData::F64(_))) {
                if valid.iter().any(|v| !v) {
                    h.u64(8);
                    for (r, _) in valid.iter().enumerate().filter(|(_, v)| !**v) {
                        h.u64(r as u64);
                    }
                }
            }
        }
        h.0
    }

    /// Renders the table as aligned text (for snapshots and the CLI).
    pub fn to_text(&self) -> String {
        let mut cells: Vec<Vec<String>> =
            vec![self.columns.iter().map(|c| c.name.clone()).collect()];
        for r in 0..self.rows() {
            cells.push(
                self.columns
                    .iter()
                    .map(|c| match &c.data {
                        _ if c.valid.as_ref().is_some_and(|v| !v[r]) => "-".to_string(),
                        ColumnData::F64(v) => format_f64(v[r]),
                        ColumnData::U64(v) => v[r].to_string(),
                        ColumnData::I64(v) => v[r].to_string(),
                        ColumnData::U32(v) => v[r].to_string(),
                        ColumnData::Bool(v) => v[r].to_string(),
                        ColumnData::Str(v) => v[r].clone(),
                        ColumnData::Category { codes, labels } => labels[codes[r] as usize].clone(),
                    })
                    .collect(),
            );
        }
        let widths: Vec<usize> = (0..self.columns.len())
            .map(|c| cells.iter().map(|row| row[c].len()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for row in cells {
            let line: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(s, w)| format!("{s:>w$}"))
                .collect();
            out += line.join("  ").trim_end();
            out.push('\n');
        }
        out
    }
}

fn format_f64(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else if x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_accessors_read_columns_by_type() {
        let mut t = Table::default();
        t.push("n", ColumnData::U32(vec![1, 2]));
        t.push(
            "kind",
            ColumnData::Category {
                codes: vec![1, 0],
                labels: vec!["a".into(), "b".into()],
            },
        );
        assert_eq!(t.col::<u32>("n"), [1, 2]);
        assert_eq!(t.get::<u64>("n"), None, "another type");
        assert_eq!(t.numbers("n"), [1.0, 2.0]);
        assert_eq!(t.labels("kind"), ["b", "a"]);
        let e = std::panic::catch_unwind(|| t.col::<f64>("n").len()).unwrap_err();
        let msg = e.downcast_ref::<String>().unwrap();
        assert_eq!(
            msg,
            "no f64 column n; the columns are n (u32), kind (category)"
        );
    }

    #[test]
    fn nullable_columns_keep_their_nulls_and_digest_as_before_without_them() {
        let mut plain = Table::default();
        plain.push("n", ColumnData::U64(vec![1, 2]));
        plain.push("x", ColumnData::F64(vec![0.5, f64::NAN]));
        let mut t = Table::default();
        t.push_nullable("n", [Some(1u64), Some(2)]);
        t.push_nullable("x", [Some(0.5), None]);
        assert_eq!(
            t.digest(),
            plain.digest(),
            "no integer null, float null as NaN"
        );
        assert_eq!(t.options::<f64>("x"), [Some(0.5), None]);
        assert_eq!(t.valid("n"), Some(&[true, true][..]));
        assert_eq!(plain.valid("n"), None);
        let mut nulls = Table::default();
        nulls.push_nullable("n", [Some(1u64), None]);
        nulls.push_nullable("x", [Some(0.5), None]);
        assert_eq!(nulls.options::<u64>("n"), [Some(1), None]);
        assert_eq!(nulls.col::<u64>("n"), [1, 0], "a null holds the filler");
        let mut zero = Table::default();
        zero.push_nullable("n", [Some(1u64), Some(0)]);
        zero.push_nullable("x", [Some(0.5), None]);
        assert_ne!(nulls.digest(), zero.digest(), "a null is not a zero");
        assert_eq!(nulls.to_text(), "n       x\n1  0.5000\n-       -\n");
    }

    #[test]
    fn text_rendering_aligns_columns() {
        let mut t = Table::default();
        t.push("flow", ColumnData::Str(vec!["a".into(), "bbbb".into()]));
        t.push("rate", ColumnData::F64(vec![1.5, f64::NAN]));
        assert_eq!(t.to_text(), "flow    rate\n   a  1.5000\nbbbb       -\n");
        assert_eq!(t.rows(), 2);
    }
}
