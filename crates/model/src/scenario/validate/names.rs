//! The names pass: every label of a scenario follows the rules of
//! [`crate::names`], and flow names are unique once replicas are expanded.

use crate::names::MAX_NAME_CHARS;
use crate::scenario::{flow_name, Scenario, ScenarioError};
use std::collections::BTreeMap;

/// Checks one label at `path`.
pub(super) fn check_label(path: &str, name: &str, may_be_empty: bool) -> Result<(), ScenarioError> {
    if name.is_empty() && !may_be_empty {
        return Err(ScenarioError::at(path, "must not be empty"));
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        let start: String = name.chars().take(20).collect();
        return Err(ScenarioError::at(
            path,
            format!("\"{start}...\" has {chars} characters (at most {MAX_NAME_CHARS})"),
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(ScenarioError::at(
            path,
            format!(
                "{name:?} contains the control character {:?}; a name is a label of printable characters",
                c
            ),
        ));
    }
    Ok(())
}

/// Checks every name of a scenario, and that flow names are unique.
pub(super) fn check(sc: &Scenario) -> Result<(), ScenarioError> {
    check_label("name", &sc.name, true)?;
    for (i, l) in sc.links.iter().enumerate() {
        if let Some(n) = &l.name {
            check_label(&format!("links[{i}].name"), n, false)?;
        }
        for (k, n) in l.between.iter().enumerate() {
            check_label(&format!("links[{i}].between[{k}]"), n, false)?;
        }
    }
    // every flow name, replicas expanded -> (flow index, named explicitly)
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, f) in sc.flows.iter().enumerate() {
        if let Some(n) = &f.name {
            check_label(&format!("flows[{i}].name"), n, false)?;
        }
        for k in 0..f.count {
            let name = flow_name(f, i, k);
            if let Some(j) = seen.insert(name.clone(), i) {
                let other = &sc.flows[j];
                let theirs = if other.count > 1 {
                    format!("a replica of flows[{j}] (count = {})", other.count)
                } else {
                    format!("flows[{j}]")
                };
                let ours = match (&f.name, f.count > 1) {
                    (None, _) => " (the default name of this flow; give it a name)",
                    (Some(_), true) => " (a replica's name)",
                    (Some(_), false) => "",
                };
                return Err(ScenarioError::at(
                    format!("flows[{i}].name"),
                    format!("\"{name}\"{ours} is already the name of {theirs}; flow names must be unique"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::names::MAX_NAME_CHARS;
    use crate::scenario::tests::err;
    use crate::scenario::Scenario;

    const BASE: &str = r#"
        name = "NAME"
        duration = "10s"
        [[links]]
        between = ["a", "b"]
        rate = "10Mbit/s"
        delay = "25ms"
        [[flows]]
        from = "a"
        to = "b"
    "#;

    /// `name = "a\u0000b"` passed validation and then failed when the output
    /// directory was created; very long names could not be directory names.
    #[test]
    fn names_are_printable_labels_of_bounded_length() {
        assert_eq!(
            err(&BASE.replace("NAME", "a\\u0000b")),
            "name: \"a\\0b\" contains the control character '\\0'; a name is a label of printable characters"
        );
        assert!(err(&BASE.replace("NAME", "line\\nbreak")).starts_with("name: "));
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        assert_eq!(
            err(&BASE.replace("NAME", &long)),
            "name: \"xxxxxxxxxxxxxxxxxxxx...\" has 129 characters (at most 128)"
        );
        // a label may hold anything printable: the Python layer maps it to a
        // directory name
        for ok in [
            "../../x",
            "/abs/path",
            "DCNET L1 → L2",
            &"y".repeat(MAX_NAME_CHARS),
        ] {
            Scenario::from_toml_str(&BASE.replace("NAME", ok)).unwrap();
        }
        assert_eq!(
            err(&BASE.replace("to = \"b\"", "to = \"b\"\nname = \"\"")),
            "flows[0].name: must not be empty"
        );
        assert!(err(&BASE.replace("[\"a\", \"b\"]", "[\"a\\t\", \"b\"]"))
            .starts_with("links[0].between[0]: \"a\\t\" contains the control character"));
    }

    /// Two flows with the same name were accepted, and in a sweep their
    /// per-flow columns collided: one flow's metrics vanished.
    #[test]
    fn flow_names_are_unique_with_replicas_expanded() {
        let two = |first: &str, second: &str| {
            format!(
                "duration = \"10s\"\n[[links]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbit/s\"\n\
                 delay = \"25ms\"\n[[flows]]\nfrom = \"a\"\nto = \"b\"\n{first}\n\
                 [[flows]]\nfrom = \"a\"\nto = \"b\"\n{second}\n"
            )
        };
        assert_eq!(
            err(&two("name = \"f\"", "name = \"f\"")),
            "flows[1].name: \"f\" is already the name of flows[0]; flow names must be unique"
        );
        assert_eq!(
            err(&two("name = \"f\"\ncount = 2", "name = \"f#1\"")),
            "flows[1].name: \"f#1\" is already the name of a replica of flows[0] (count = 2); flow names must be unique"
        );
        assert_eq!(
            err(&two("name = \"flow1\"", "")),
            "flows[1].name: \"flow1\" (the default name of this flow; give it a name) is already the name of flows[0]; flow names must be unique"
        );
        assert_eq!(
            err(&two("name = \"g#0\"", "name = \"g\"\ncount = 3")),
            "flows[1].name: \"g#0\" (a replica's name) is already the name of flows[0]; flow names must be unique"
        );
        Scenario::from_toml_str(&two("name = \"f\"\ncount = 2", "name = \"g\"\ncount = 2"))
            .unwrap();
        Scenario::from_toml_str(&two("", "")).unwrap();
    }
}
