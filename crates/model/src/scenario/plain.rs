//! serde's type errors in plain words.
//!
//! serde reports a value of the wrong type in Rust's terms
//! (`invalid type: string "abc", expected u32`); someone who wrote a TOML
//! file or a `--set` value should read `"abc" is not a whole number`. The
//! rewrite covers serde's `invalid type` and `invalid value` messages; any
//! other message (unknown fields and variants, the schema's own messages) is
//! returned unchanged.

/// `message` with serde's `invalid type` / `invalid value` wording replaced
/// by plain words: the value as written, then what it should be.
pub(crate) fn plain(message: &str) -> String {
    let rest = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "));
    let Some(rest) = rest else {
        return message.to_string();
    };
    let Some((got, expected)) = rest.rsplit_once(", expected ") else {
        return message.to_string();
    };
    let integer = got.starts_with("integer ");
    let got = value(got);
    match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" if integer && got.starts_with('-') => {
            format!("{got} is not a whole number of 0 or more")
        }
        "u8" | "u16" | "u32" | "u64" | "usize" if integer => {
            format!("{got} is too large (at most {})", max_of(expected))
        }
        "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" | "isize" => {
            format!("{got} is not a whole number")
        }
        "f32" | "f64" => format!("{got} is not a number"),
        "a boolean" => format!("{got} is not true or false"),
        "a string" => format!("{got} is not text; write it in quotes"),
        _ => format!("{got} is not {expected}"),
    }
}

/// serde's description of the value it got, as the user wrote it.
fn value(got: &str) -> String {
    for prefix in ["integer ", "floating point ", "boolean "] {
        if let Some(v) = got.strip_prefix(prefix) {
            return v.trim_matches('`').to_string();
        }
    }
    if let Some(v) = got.strip_prefix("string ") {
        return v.to_string();
    }
    match got {
        "sequence" => "a list".into(),
        "map" => "a table".into(),
        "unit value" | "null" => "nothing".into(),
        other => other.to_string(),
    }
}

fn max_of(int: &str) -> u64 {
    match int {
        "u8" => u8::MAX.into(),
        "u16" => u16::MAX.into(),
        "u32" => u32::MAX.into(),
        _ => u64::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn type_errors_read_as_plain_words() {
        let cases = [
            (
                r#"invalid type: string "abc", expected u32"#,
                r#""abc" is not a whole number"#,
            ),
            (
                "invalid value: integer `-1`, expected u32",
                "-1 is not a whole number of 0 or more",
            ),
            (
                "invalid value: integer `300`, expected u8",
                "300 is too large (at most 255)",
            ),
            (
                "invalid type: floating point `1.5`, expected u8",
                "1.5 is not a whole number",
            ),
            (
                r#"invalid type: string "maybe", expected a boolean"#,
                r#""maybe" is not true or false"#,
            ),
            (
                "invalid type: integer `5`, expected a string",
                "5 is not text; write it in quotes",
            ),
            (
                r#"invalid type: string "x", expected f64"#,
                r#""x" is not a number"#,
            ),
            (
                r#"invalid type: sequence, expected a duration such as "240ms""#,
                r#"a list is not a duration such as "240ms""#,
            ),
            (
                "invalid type: integer `5`, expected TCP settings such as { mss = 1460 }",
                "5 is not TCP settings such as { mss = 1460 }",
            ),
            (
                "invalid type: map, expected i64",
                "a table is not a whole number",
            ),
        ];
        for (serde, words) in cases {
            assert_eq!(plain(serde), words, "{serde}");
        }
    }

    #[test]
    fn other_messages_are_kept() {
        for m in [
            "unknown field `ccc`, expected one of `name`, `from`",
            "unknown variant `bsd`, expected `rfc` or `linux`",
            "invalid length 3, expected 2 nodes",
            "must be above zero",
            "invalid type: odd",
        ] {
            assert_eq!(plain(m), m);
        }
    }
}
