//! Core options: what a core declares (legacy `SET_VARIABLES` strings or the
//! v1/v2 definition structs, already turned into Rust values by the
//! environment handler), the user's `--option KEY=VALUE` overrides, and the
//! value to answer for each `GET_VARIABLE`. No FFI here.

use super::error::LibretroError;
use std::ffi::{CStr, CString};

/// One option a core declared, with the value the host answers for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreOption {
    /// The key the core asks for (`GET_VARIABLE`), e.g. `genesis_plus_gx_addr_error`.
    pub key: String,
    /// The core's human-readable name for the option.
    pub description: String,
    /// Allowed values; empty when the core did not list any.
    pub values: Vec<String>,
    /// The core's default value.
    pub default: String,
    /// The value answered to the core: the user's override when it is one of
    /// `values`, else `default`.
    pub current: String,
    /// The core's help text for it (v1 and v2 definitions; empty if none).
    pub info: String,
    /// The key of its category (v2 definitions), if it has one.
    pub category: Option<String>,
}

/// A category of options (v2 definitions): options of a category are
/// shown together under its name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OptionCategory {
    /// The key options name it by.
    pub key: String,
    /// Its name.
    pub description: String,
    /// Its help text.
    pub info: String,
}

/// What a definition says of an option besides its values: (key, help
/// text, category key).
pub type OptionNotes = (String, String, Option<String>);

/// The options as groups to show: each category's (its name, its help
/// text, its options) in the core's order of categories, then the options
/// of no category (or of one the core did not declare) under "Options".
pub fn grouped<'a>(
    options: &'a [CoreOption],
    categories: &'a [OptionCategory],
) -> Vec<(&'a str, &'a str, Vec<&'a CoreOption>)> {
    let in_category = |key: &str| {
        options
            .iter()
            .filter(|option| option.category.as_deref() == Some(key))
            .collect::<Vec<_>>()
    };
    let mut groups: Vec<(&str, &str, Vec<&CoreOption>)> = categories
        .iter()
        .map(|category| {
            (
                category.description.as_str(),
                category.info.as_str(),
                in_category(&category.key),
            )
        })
        .filter(|(_, _, options)| !options.is_empty())
        .collect();
    let known = |key: &String| categories.iter().any(|category| category.key == *key);
    let rest: Vec<&CoreOption> = options
        .iter()
        .filter(|option| !option.category.as_ref().is_some_and(known))
        .collect();
    if !rest.is_empty() {
        groups.push(("Options", "", rest));
    }
    groups
}

/// Parses `KEY=VALUE` (as given to `--option`): split at the first `=`, so
/// values may hold `=`; spaces around key and value are dropped.
pub fn parse_option_override(text: &str) -> Result<(String, String), LibretroError> {
    let malformed = || LibretroError::MalformedOption {
        text: text.to_string(),
    };
    let (key, value) = text.split_once('=').ok_or_else(malformed)?;
    let key = key.trim();
    if key.is_empty() {
        return Err(malformed());
    }
    Ok((key.to_string(), value.trim().to_string()))
}

/// Parses a legacy `SET_VARIABLES` value, `"Description; first|second|third"`,
/// into the description and the values (the first is the default).
/// Returns `None` when there is no `;` separator or no value.
pub fn parse_legacy_variable(text: &str) -> Option<(String, Vec<String>)> {
    let (description, values) = text.split_once(';')?;
    let values: Vec<String> = values
        .trim_start()
        .split('|')
        .filter(|value| !value.is_empty())
        .map(str::to_string)
        .collect();
    if values.is_empty() {
        return None;
    }
    Some((description.trim().to_string(), values))
}

/// The options of one core plus the user's overrides.
#[derive(Debug, Default)]
pub struct OptionStore {
    options: Vec<CoreOption>,
    /// NUL-terminated copies of each option's current value, in the order of
    /// `options`: `GET_VARIABLE` hands the core a pointer into these, which
    /// must stay valid until the options change.
    current_c: Vec<CString>,
    overrides: Vec<(String, String)>,
    categories: Vec<OptionCategory>,
    /// Set when a value the core may have read changed; cleared when the
    /// core reads any value (see [`OptionStore::is_updated`]).
    updated: bool,
}

impl OptionStore {
    pub fn new(overrides: Vec<(String, String)>) -> Self {
        OptionStore {
            overrides,
            ..OptionStore::default()
        }
    }

    /// Replaces the declared options (each `SET_*` call declares the full set).
    /// `declared` is (key, description, values, default); a default that is
    /// not one of the values falls back to the first value.
    pub fn declare(&mut self, declared: Vec<(String, String, Vec<String>, Option<String>)>) {
        self.options = declared
            .into_iter()
            .map(|(key, description, values, default)| {
                let default = match default {
                    Some(default) if values.is_empty() || values.contains(&default) => default,
                    _ => values.first().cloned().unwrap_or_default(),
                };
                CoreOption {
                    key,
                    description,
                    values,
                    current: default.clone(),
                    default,
                    info: String::new(),
                    category: None,
                }
            })
            .collect();
        self.apply_overrides();
    }

    fn apply_overrides(&mut self) {
        let before: Vec<(String, CString)> = self
            .options
            .iter()
            .map(|option| option.key.clone())
            .zip(std::mem::take(&mut self.current_c))
            .collect();
        for option in &mut self.options {
            option.current = option.default.clone();
            // The last override of a key wins, as on a command line.
            if let Some((_, value)) = self
                .overrides
                .iter()
                .rev()
                .find(|(key, _)| *key == option.key)
            {
                if option.values.is_empty() || option.values.contains(value) {
                    option.current = value.clone();
                }
            }
        }
        self.current_c = self
            .options
            .iter()
            .map(|option| to_c_string(&option.current))
            .collect();
        // Only a value that was already answered can have changed; a first
        // declaration is no update (cores read every option at load anyway).
        let changed = self
            .options
            .iter()
            .zip(&self.current_c)
            .any(|(option, now)| {
                before
                    .iter()
                    .any(|(key, was)| *key == option.key && was != now)
            });
        self.updated |= changed;
    }

    /// The value to answer for `GET_VARIABLE` of `key`, or `None` if the
    /// core never declared it. Any read clears [`OptionStore::is_updated`],
    /// as in RetroArch: the core is reading the options now.
    pub fn read(&mut self, key: &[u8]) -> Option<&CStr> {
        self.updated = false;
        self.value_for(key)
    }

    /// The value answered for `key`, or `None` if the core never declared it.
    pub fn value_for(&self, key: &[u8]) -> Option<&CStr> {
        self.options
            .iter()
            .position(|option| option.key.as_bytes() == key)
            .map(|index| self.current_c[index].as_c_str())
    }

    /// The answer to `GET_VARIABLE_UPDATE`: whether a value changed since
    /// the core last read one. Asking does not clear it (reading does), so a
    /// core that asks every frame but reads later still learns of a change.
    pub fn is_updated(&self) -> bool {
        self.updated
    }

    pub fn options(&self) -> &[CoreOption] {
        &self.options
    }

    /// The categories the core declared (v2 definitions).
    pub fn categories(&self) -> &[OptionCategory] {
        &self.categories
    }

    /// Adds what the definitions say besides values: each option's help
    /// text and category, and the categories (v2).
    pub fn describe(&mut self, notes: Vec<OptionNotes>, categories: Vec<OptionCategory>) {
        for (key, info, category) in notes {
            if let Some(option) = self.options.iter_mut().find(|option| option.key == key) {
                option.info = info;
                option.category = category;
            }
        }
        self.categories = categories;
    }

    /// Checks every override against what core `core` declared.
    pub fn validate_overrides(&self, core: &str) -> Result<(), LibretroError> {
        for (key, value) in &self.overrides {
            let option = self
                .options
                .iter()
                .find(|option| option.key == *key)
                .ok_or_else(|| LibretroError::UnknownOption {
                    core: core.to_string(),
                    key: key.clone(),
                    known: self
                        .options
                        .iter()
                        .map(|option| option.key.clone())
                        .collect(),
                })?;
            if !option.values.is_empty() && !option.values.contains(value) {
                return Err(LibretroError::InvalidOptionValue {
                    core: core.to_string(),
                    key: key.clone(),
                    value: value.clone(),
                    allowed: option.values.clone(),
                });
            }
        }
        Ok(())
    }
}

/// A C string of `text`, cut at an interior NUL (which C would stop at anyway).
pub fn to_c_string(text: &str) -> CString {
    let bytes = text.as_bytes();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    CString::new(&bytes[..end]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declare_region(store: &mut OptionStore) {
        store.declare(vec![
            (
                "core_region".into(),
                "Region".into(),
                vec!["auto".into(), "ntsc".into(), "pal".into()],
                Some("auto".into()),
            ),
            (
                "core_turbo".into(),
                "Turbo".into(),
                vec!["off".into(), "on".into()],
                None,
            ),
        ]);
    }

    #[test]
    fn options_are_grouped_by_their_categories_in_the_cores_order_and_the_rest_come_last() {
        let mut store = OptionStore::new(Vec::new());
        declare_region(&mut store);
        let category = |key: &str, description: &str| OptionCategory {
            key: key.into(),
            description: description.into(),
            info: format!("{description} settings"),
        };
        store.describe(
            vec![
                (
                    "core_region".into(),
                    "Which console".into(),
                    Some("system".into()),
                ),
                ("core_turbo".into(), "Faster".into(), Some("nowhere".into())),
            ],
            vec![category("video", "Video"), category("system", "System")],
        );
        let groups = grouped(store.options(), store.categories());
        let shown: Vec<(&str, &str, Vec<&str>)> = groups
            .iter()
            .map(|(name, info, options)| {
                (
                    *name,
                    *info,
                    options.iter().map(|o| o.key.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("System", "System settings", vec!["core_region"]),
                ("Options", "", vec!["core_turbo"]),
            ]
        );
        assert_eq!(store.options()[0].info, "Which console");
    }

    #[test]
    fn an_option_override_is_split_at_the_first_equals_sign() {
        assert_eq!(
            parse_option_override("core_palette = a=b").unwrap(),
            ("core_palette".to_string(), "a=b".to_string())
        );
        assert!(matches!(
            parse_option_override("no-equals-sign"),
            Err(LibretroError::MalformedOption { .. })
        ));
        assert!(matches!(
            parse_option_override("=value"),
            Err(LibretroError::MalformedOption { .. })
        ));
    }

    #[test]
    fn a_legacy_variable_lists_its_description_and_values_first_being_the_default() {
        let (description, values) = parse_legacy_variable("Palette; standard|z26|user").unwrap();
        assert_eq!(description, "Palette");
        assert_eq!(values, vec!["standard", "z26", "user"]);
        assert_eq!(parse_legacy_variable("no separator"), None);
        assert_eq!(parse_legacy_variable("Empty; "), None);
    }

    #[test]
    fn every_declared_option_answers_its_default_without_overrides() {
        let mut store = OptionStore::new(vec![]);
        declare_region(&mut store);
        assert_eq!(
            store.value_for(b"core_region").unwrap().to_str(),
            Ok("auto")
        );
        // No default given: the first value is the default.
        assert_eq!(store.value_for(b"core_turbo").unwrap().to_str(), Ok("off"));
        assert_eq!(store.value_for(b"never_declared"), None);
    }

    #[test]
    fn an_override_replaces_the_default_and_the_last_one_wins() {
        let mut store = OptionStore::new(vec![
            ("core_region".into(), "ntsc".into()),
            ("core_region".into(), "pal".into()),
        ]);
        declare_region(&mut store);
        assert_eq!(store.value_for(b"core_region").unwrap().to_str(), Ok("pal"));
        assert!(store.validate_overrides("Test").is_ok());
    }

    #[test]
    fn declaring_options_is_not_an_update_the_core_must_act_on() {
        let mut store = OptionStore::new(vec![("core_region".into(), "pal".into())]);
        declare_region(&mut store);
        assert!(!store.is_updated());
        // Declaring the same set again changes nothing either.
        declare_region(&mut store);
        assert!(!store.is_updated());
    }

    #[test]
    fn a_changed_value_is_an_update_until_the_core_reads_an_option() {
        let mut store = OptionStore::new(vec![]);
        declare_region(&mut store);
        // The core declares again with another default for core_turbo.
        store.declare(vec![(
            "core_turbo".into(),
            "Turbo".into(),
            vec!["off".into(), "on".into()],
            Some("on".into()),
        )]);
        assert!(store.is_updated());
        assert!(store.is_updated(), "asking does not clear the update");
        assert_eq!(store.read(b"core_turbo").unwrap().to_str(), Ok("on"));
        assert!(!store.is_updated());
    }

    #[test]
    fn an_override_of_an_undeclared_key_is_an_error_listing_the_known_keys() {
        let mut store = OptionStore::new(vec![("core_regoin".into(), "pal".into())]);
        declare_region(&mut store);
        match store.validate_overrides("Test") {
            Err(err @ LibretroError::UnknownOption { .. }) => {
                let message = err.to_string();
                assert!(message.contains("core_regoin"), "{message}");
                assert!(message.contains("core_region, core_turbo"), "{message}");
            }
            other => panic!("expected UnknownOption, got {other:?}"),
        }
    }

    #[test]
    fn an_override_with_a_value_not_allowed_is_an_error_and_the_core_gets_the_default() {
        let mut store = OptionStore::new(vec![("core_turbo".into(), "maybe".into())]);
        declare_region(&mut store);
        assert_eq!(store.value_for(b"core_turbo").unwrap().to_str(), Ok("off"));
        match store.validate_overrides("Test") {
            Err(LibretroError::InvalidOptionValue {
                core,
                key,
                value,
                allowed,
            }) => {
                assert_eq!(core, "Test");
                assert_eq!(key, "core_turbo");
                assert_eq!(value, "maybe");
                assert_eq!(allowed, vec!["off", "on"]);
            }
            other => panic!("expected InvalidOptionValue, got {other:?}"),
        }
    }

    #[test]
    fn a_default_that_is_not_among_the_values_falls_back_to_the_first_value() {
        let mut store = OptionStore::new(vec![]);
        store.declare(vec![(
            "k".into(),
            "K".into(),
            vec!["a".into(), "b".into()],
            Some("zzz".into()),
        )]);
        assert_eq!(store.options()[0].default, "a");
    }
}
