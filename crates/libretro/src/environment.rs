//! Answers to the environment commands a core sends (`retro_environment_t`).
//!
//! Each command's `data` is read and written only as the type libretro.h
//! defines for it. Unknown commands answer false and are logged once each.

use super::context::{c_str, CoreContext};
use super::core::{AvInfo, InputDescriptor, MemoryDescriptor};
use super::ffi::{self, env};
use super::options::{parse_legacy_variable, OptionCategory};
use netcode::emulator::{PixelFormat, SavestateContext};
use std::ffi::{c_char, c_uint, c_void};

/// Upper bound on entries read from NULL-terminated arrays the core passes,
/// so a missing terminator cannot walk through all of memory.
const MAX_ARRAY_ENTRIES: usize = 4096;

/// What the core is asked to produce (GET_AUDIO_VIDEO_ENABLE bits).
const AV_ENABLE_VIDEO: i32 = 1 << 0;
const AV_ENABLE_AUDIO: i32 = 1 << 1;

/// The host's version of the core options interface (v2 definitions).
const CORE_OPTIONS_VERSION: c_uint = 2;
const MESSAGE_INTERFACE_VERSION: c_uint = 1;

fn lossy(text: *const c_char) -> String {
    // SAFETY: every string pointer the core passes is NULL or NUL-terminated
    // and valid for the duration of the environment call.
    unsafe { c_str(text) }
        .map(|text| text.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Writes `value` into the core's output pointer, or answers false for NULL.
///
/// # Safety
/// `data` is NULL or points to a writable `T`.
unsafe fn answer<T>(data: *mut c_void, value: T) -> bool {
    if data.is_null() {
        return false;
    }
    // SAFETY: non-null and of type `T` per the caller's contract.
    unsafe { data.cast::<T>().write(value) };
    true
}

/// Handles one environment command.
///
/// # Safety
/// `data` is what the core passed with `command`: NULL or a pointer of the
/// type libretro.h defines for that command, valid during this call.
pub unsafe fn handle(context: &mut CoreContext, command: c_uint, data: *mut c_void) -> bool {
    let command = command & !ffi::RETRO_ENVIRONMENT_EXPERIMENTAL;
    // SAFETY (for every `answer` and pointer read below): `data` has the type
    // libretro.h defines for the matched command, per this function's contract.
    unsafe {
        match command {
            env::GET_CAN_DUPE => answer(data, true),
            env::GET_SYSTEM_DIRECTORY => answer(data, context.strings.system_dir.as_ptr()),
            env::GET_SAVE_DIRECTORY => answer(data, context.strings.save_dir.as_ptr()),
            env::GET_CORE_ASSETS_DIRECTORY => {
                answer(data, context.strings.core_assets_dir.as_ptr())
            }
            env::GET_LIBRETRO_PATH => answer(data, context.strings.libretro_path.as_ptr()),
            env::GET_USERNAME => answer(data, context.strings.username.as_ptr()),
            env::GET_LANGUAGE => answer(data, ffi::RETRO_LANGUAGE_ENGLISH),
            env::SET_PIXEL_FORMAT => set_pixel_format(context, data),
            env::GET_LOG_INTERFACE => answer(
                data,
                ffi::RetroLogCallback {
                    log: ffi::netcade_core_log_printf,
                },
            ),
            env::SET_INPUT_DESCRIPTORS => set_input_descriptors(context, data),
            env::SET_VARIABLES => set_variables(context, data),
            env::SET_CORE_OPTIONS => {
                set_core_options_v1(context, data as *const ffi::RetroCoreOptionDefinition)
            }
            env::SET_CORE_OPTIONS_INTL => {
                let intl = data as *const ffi::RetroCoreOptionsIntl;
                !intl.is_null() && set_core_options_v1(context, (*intl).us)
            }
            env::SET_CORE_OPTIONS_V2 => {
                set_core_options_v2(context, data as *const ffi::RetroCoreOptionsV2)
            }
            env::SET_CORE_OPTIONS_V2_INTL => {
                let intl = data as *const ffi::RetroCoreOptionsV2Intl;
                !intl.is_null() && set_core_options_v2(context, (*intl).us)
            }
            env::GET_CORE_OPTIONS_VERSION => answer(data, CORE_OPTIONS_VERSION),
            env::SET_CORE_OPTIONS_DISPLAY => true,
            env::GET_VARIABLE => get_variable(context, data),
            // True only when a value changed after the core read it, never
            // for the first declaration: snes9x would otherwise re-apply
            // every option on its first frame (see docs/libretro-host.md).
            env::GET_VARIABLE_UPDATE => answer(data, context.options.is_updated()),
            env::SET_SUPPORT_NO_GAME => {
                if data.is_null() {
                    return false;
                }
                // Read as a byte: a core passing anything but 0 or 1 would
                // make a Rust bool undefined behaviour.
                context.support_no_game = *(data as *const u8) != 0;
                true
            }
            env::GET_AUDIO_VIDEO_ENABLE => {
                let video = if context.render_video {
                    AV_ENABLE_VIDEO
                } else {
                    0
                };
                let audio = if context.play_audio {
                    AV_ENABLE_AUDIO
                } else {
                    0
                };
                answer(data, video | audio)
            }
            env::SET_SERIALIZATION_QUIRKS => {
                if data.is_null() {
                    return false;
                }
                context.serialization_quirks = *(data as *const u64);
                tracing::debug!(
                    core = %context.core_name,
                    "serialization quirks {:#x}",
                    context.serialization_quirks
                );
                true
            }
            env::SET_MEMORY_MAPS => set_memory_maps(context, data as *const ffi::RetroMemoryMap),
            env::SET_GEOMETRY => {
                if data.is_null() {
                    return false;
                }
                let geometry = &*(data as *const ffi::RetroGameGeometry);
                context.av_info.set_geometry(geometry);
                true
            }
            env::SET_SYSTEM_AV_INFO => {
                if data.is_null() {
                    return false;
                }
                context.av_info = AvInfo::from_ffi(&*(data as *const ffi::RetroSystemAvInfo));
                true
            }
            // Accepting these is all the host needs: it always wants RetroPad
            // bitmasks, and keeps the default device on every port.
            env::GET_INPUT_BITMASKS => {
                if !data.is_null() {
                    *(data as *mut bool) = true;
                }
                true
            }
            env::SET_CONTROLLER_INFO | env::SET_SUBSYSTEM_INFO => true,
            env::SET_PERFORMANCE_LEVEL => {
                if data.is_null() {
                    return false;
                }
                context.performance_level = *(data as *const c_uint);
                true
            }
            env::SHUTDOWN => {
                if !context.shutdown_requested {
                    tracing::warn!(core = %context.core_name, "the core asked to shut down");
                }
                context.shutdown_requested = true;
                true
            }
            env::GET_SAVESTATE_CONTEXT => {
                // NULL asks whether the host answers at all (FBNeo does so
                // at start-up and warns when not), as in RetroArch.
                if !data.is_null() {
                    *(data as *mut i32) = savestate_context(context);
                }
                true
            }
            env::GET_FASTFORWARDING => answer(data, false),
            env::GET_INPUT_MAX_USERS => answer(data, super::context::MAX_PORTS as c_uint),
            env::GET_MESSAGE_INTERFACE_VERSION => answer(data, MESSAGE_INTERFACE_VERSION),
            env::SET_MESSAGE => {
                if data.is_null() {
                    return false;
                }
                let message = &*(data as *const ffi::RetroMessage);
                tracing::info!(core = %context.core_name, "{}", lossy(message.msg));
                true
            }
            env::SET_MESSAGE_EXT => {
                if data.is_null() {
                    return false;
                }
                let message = &*(data as *const ffi::RetroMessageExt);
                tracing::info!(core = %context.core_name, "{}", lossy(message.msg));
                true
            }
            _ => {
                if context.unknown_commands.insert(command) {
                    tracing::debug!(
                        core = %context.core_name,
                        "unsupported environment command {command}; answered false"
                    );
                }
                false
            }
        }
    }
}

/// The answer to GET_SAVESTATE_CONTEXT: what the frame loop's states are
/// for while the core saves or loads one, NORMAL at any other time.
fn savestate_context(context: &CoreContext) -> i32 {
    if !context.in_savestate_call {
        return ffi::RETRO_SAVESTATE_CONTEXT_NORMAL;
    }
    match context.savestate_context {
        SavestateContext::Normal => ffi::RETRO_SAVESTATE_CONTEXT_NORMAL,
        SavestateContext::Rollback => ffi::RETRO_SAVESTATE_CONTEXT_RUNAHEAD_SAME_INSTANCE,
        SavestateContext::Netplay => ffi::RETRO_SAVESTATE_CONTEXT_ROLLBACK_NETPLAY,
    }
}

/// # Safety
/// `data` is NULL or points to an `enum retro_pixel_format`.
unsafe fn set_pixel_format(context: &mut CoreContext, data: *mut c_void) -> bool {
    if data.is_null() {
        return false;
    }
    // SAFETY: per the contract, an int-sized enum.
    let requested = unsafe { *(data as *const i32) };
    let format = match requested {
        ffi::RETRO_PIXEL_FORMAT_0RGB1555 => PixelFormat::Rgb1555,
        ffi::RETRO_PIXEL_FORMAT_XRGB8888 => PixelFormat::Xrgb8888,
        ffi::RETRO_PIXEL_FORMAT_RGB565 => PixelFormat::Rgb565,
        other => {
            tracing::warn!(core = %context.core_name, "refused unknown pixel format {other}");
            return false;
        }
    };
    context.pixel_format = format;
    true
}

/// # Safety
/// `data` is NULL or points to an array of `retro_input_descriptor`
/// terminated by an entry whose description is NULL.
unsafe fn set_input_descriptors(context: &mut CoreContext, data: *mut c_void) -> bool {
    let mut entry = data as *const ffi::RetroInputDescriptor;
    if entry.is_null() {
        return false;
    }
    context.input_descriptors.clear();
    for _ in 0..MAX_ARRAY_ENTRIES {
        // SAFETY: the array continues until the terminator, which is not yet reached.
        let descriptor = unsafe { &*entry };
        if descriptor.description.is_null() {
            break;
        }
        context.input_descriptors.push(InputDescriptor {
            port: descriptor.port,
            device: descriptor.device,
            index: descriptor.index,
            id: descriptor.id,
            description: lossy(descriptor.description),
        });
        // SAFETY: still inside the array (the terminator follows at the latest).
        entry = unsafe { entry.add(1) };
    }
    true
}

/// # Safety
/// `data` is NULL or points to an array of `retro_variable` terminated by a
/// NULL key.
unsafe fn set_variables(context: &mut CoreContext, data: *mut c_void) -> bool {
    let mut entry = data as *const ffi::RetroVariable;
    if entry.is_null() {
        return false;
    }
    let mut declared = Vec::new();
    for _ in 0..MAX_ARRAY_ENTRIES {
        // SAFETY: the array continues until the NULL-key terminator.
        let variable = unsafe { &*entry };
        if variable.key.is_null() {
            break;
        }
        let key = lossy(variable.key);
        let text = lossy(variable.value);
        match parse_legacy_variable(&text) {
            Some((description, values)) => declared.push((key, description, values, None)),
            None => tracing::warn!(
                core = %context.core_name,
                "ignored option {key} with malformed declaration {text:?}"
            ),
        }
        // SAFETY: still inside the array.
        entry = unsafe { entry.add(1) };
    }
    context.options.declare(declared);
    true
}

/// Reads a values array, up to the NULL value or its fixed length.
fn option_values(values: &[ffi::RetroCoreOptionValue]) -> Vec<String> {
    values
        .iter()
        .take_while(|value| !value.value.is_null())
        .map(|value| lossy(value.value))
        .collect()
}

/// The fields every version of a core option definition has: key,
/// description, values and default.
type DefinitionFields<'a> = (
    *const c_char,
    *const c_char,
    &'a [ffi::RetroCoreOptionValue],
    *const c_char,
);

/// Copies a definitions array (v1 or v2, told apart by `fields`) into the
/// context's option table.
///
/// # Safety
/// `definitions` is NULL or points to an array terminated by a NULL key.
unsafe fn declare_definitions<D>(
    context: &mut CoreContext,
    definitions: *const D,
    fields: impl Fn(&D) -> DefinitionFields<'_>,
) -> bool {
    if definitions.is_null() {
        return false;
    }
    let mut declared = Vec::new();
    for index in 0..MAX_ARRAY_ENTRIES {
        // SAFETY: the array continues until the NULL-key terminator.
        let (key, desc, values, default) = fields(unsafe { &*definitions.add(index) });
        if key.is_null() {
            break;
        }
        declared.push((
            lossy(key),
            lossy(desc),
            option_values(values),
            (!default.is_null()).then(|| lossy(default)),
        ));
    }
    context.options.declare(declared);
    true
}

/// # Safety
/// `definitions` is NULL or points to an array of v1 definitions terminated
/// by a NULL key.
unsafe fn set_core_options_v1(
    context: &mut CoreContext,
    definitions: *const ffi::RetroCoreOptionDefinition,
) -> bool {
    // SAFETY: the caller's contract is declare_definitions' contract.
    let declared = unsafe {
        declare_definitions(context, definitions, |d| {
            (d.key, d.desc, &d.values, d.default_value)
        })
    };
    if declared {
        // SAFETY: as above; each entry's strings are NULL or NUL-terminated.
        let notes = unsafe {
            null_key_terminated(definitions, |d| d.key)
                .map(|d| (lossy(d.key), lossy(d.info), None))
                .collect()
        };
        context.options.describe(notes, Vec::new());
    }
    declared
}

/// # Safety
/// `options` is NULL or points to a `retro_core_options_v2` whose definitions
/// array is terminated by a NULL key.
unsafe fn set_core_options_v2(
    context: &mut CoreContext,
    options: *const ffi::RetroCoreOptionsV2,
) -> bool {
    if options.is_null() {
        return false;
    }
    // SAFETY: non-null and of this type per the contract.
    let (definitions, categories) = unsafe { ((*options).definitions, (*options).categories) };
    // SAFETY: the definitions array is NULL-key terminated per the contract.
    let declared = unsafe {
        declare_definitions(context, definitions, |d| {
            (d.key, d.desc, &d.values, d.default_value)
        })
    };
    if declared {
        // SAFETY: as above; each entry's strings are NULL or NUL-terminated.
        let notes = unsafe {
            null_key_terminated(definitions, |d| d.key)
                .map(|d| {
                    let category = (!d.category_key.is_null()).then(|| lossy(d.category_key));
                    (lossy(d.key), lossy(d.info), category)
                })
                .collect()
        };
        // SAFETY: the categories array is NULL or NULL-key terminated.
        let categories = unsafe {
            null_key_terminated(categories, |c| c.key)
                .map(|c| OptionCategory {
                    key: lossy(c.key),
                    description: lossy(c.desc),
                    info: lossy(c.info),
                })
                .collect()
        };
        context.options.describe(notes, categories);
    }
    declared
}

/// The entries of a C array up to the one whose key is NULL (at most
/// [`MAX_ARRAY_ENTRIES`]); none for a NULL array.
///
/// # Safety
/// `array` is NULL or points to an array terminated by an entry whose
/// `key` is NULL, which lives as long as `'a`.
unsafe fn null_key_terminated<'a, T: 'a>(
    array: *const T,
    key: impl Fn(&T) -> *const c_char + 'a,
) -> impl Iterator<Item = &'a T> + 'a {
    (0..MAX_ARRAY_ENTRIES).map_while(move |index| {
        if array.is_null() {
            return None;
        }
        // SAFETY: the array continues until the NULL-key terminator.
        let entry = unsafe { &*array.add(index) };
        (!key(entry).is_null()).then_some(entry)
    })
}

/// # Safety
/// `data` is NULL or points to a `retro_variable` whose key the core set.
unsafe fn get_variable(context: &mut CoreContext, data: *mut c_void) -> bool {
    let variable = data as *mut ffi::RetroVariable;
    if variable.is_null() {
        return false;
    }
    // SAFETY: a writable retro_variable per the contract.
    let variable = unsafe { &mut *variable };
    // SAFETY: the key is NULL or a NUL-terminated string.
    let Some(key) = (unsafe { c_str(variable.key) }) else {
        variable.value = std::ptr::null();
        return false;
    };
    match context.options.read(key.to_bytes()) {
        // The pointer stays valid until the options are declared again.
        Some(value) => {
            variable.value = value.as_ptr();
            true
        }
        None => {
            variable.value = std::ptr::null();
            false
        }
    }
}

/// # Safety
/// `map` is NULL or points to a `retro_memory_map` with `num_descriptors`
/// descriptors.
unsafe fn set_memory_maps(context: &mut CoreContext, map: *const ffi::RetroMemoryMap) -> bool {
    if map.is_null() {
        return false;
    }
    // SAFETY: non-null and of this type per the contract.
    let map = unsafe { &*map };
    if map.descriptors.is_null() {
        return false;
    }
    let count = (map.num_descriptors as usize).min(MAX_ARRAY_ENTRIES);
    // SAFETY: the core passes `num_descriptors` descriptors at `descriptors`.
    let descriptors = unsafe { std::slice::from_raw_parts(map.descriptors, count) };
    context.memory_descriptors = descriptors
        .iter()
        .map(|descriptor| MemoryDescriptor {
            flags: descriptor.flags,
            address: descriptor.ptr as usize,
            offset: descriptor.offset,
            start: descriptor.start,
            select: descriptor.select,
            disconnect: descriptor.disconnect,
            len: descriptor.len,
            addrspace: lossy(descriptor.addrspace),
        })
        .collect();
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::HostStrings;
    use crate::options::OptionStore;
    use std::ffi::{CStr, CString};
    use std::ptr::null;

    fn context_with(overrides: Vec<(String, String)>) -> CoreContext {
        let strings = HostStrings {
            system_dir: CString::new("/sys-dir").unwrap(),
            save_dir: CString::new("/save-dir").unwrap(),
            core_assets_dir: CString::default(),
            libretro_path: CString::default(),
            username: CString::new("player").unwrap(),
        };
        CoreContext::new(OptionStore::new(overrides), strings)
    }

    /// Sends `command` with `data` as the core would.
    fn send<T>(context: &mut CoreContext, command: c_uint, data: &mut T) -> bool {
        // SAFETY: every call site passes the type libretro.h defines for `command`.
        unsafe { handle(context, command, (data as *mut T).cast()) }
    }

    fn get_variable(context: &mut CoreContext, key: &CStr) -> Option<String> {
        let mut variable = ffi::RetroVariable {
            key: key.as_ptr(),
            value: null(),
        };
        let found = send(context, env::GET_VARIABLE, &mut variable);
        // SAFETY: the host answers NULL or one of its NUL-terminated strings.
        let value = unsafe { c_str(variable.value) }.map(|v| v.to_string_lossy().into_owned());
        assert_eq!(found, value.is_some());
        value
    }

    #[test]
    fn legacy_variables_are_answered_with_their_first_value() {
        let mut context = context_with(vec![]);
        let key = CString::new("stella_filter").unwrap();
        let declaration = CString::new("Filter; disabled|composite|svideo").unwrap();
        let mut variables = [
            ffi::RetroVariable {
                key: key.as_ptr(),
                value: declaration.as_ptr(),
            },
            ffi::RetroVariable {
                key: null(),
                value: null(),
            },
        ];
        assert!(send(&mut context, env::SET_VARIABLES, &mut variables[0]));
        // What snes9x asks on its first frame: nothing changed since load.
        let mut updated = true;
        assert!(send(&mut context, env::GET_VARIABLE_UPDATE, &mut updated));
        assert!(!updated, "declared options are not an update");
        assert_eq!(
            get_variable(&mut context, &key).as_deref(),
            Some("disabled")
        );
        let unknown = CString::new("not_declared").unwrap();
        assert_eq!(get_variable(&mut context, &unknown), None);
    }

    fn no_values() -> [ffi::RetroCoreOptionValue; ffi::RETRO_NUM_CORE_OPTION_VALUES_MAX] {
        std::array::from_fn(|_| ffi::RetroCoreOptionValue {
            value: null(),
            label: null(),
        })
    }

    #[test]
    fn v2_options_are_answered_with_their_default_or_the_users_override() {
        let mut context = context_with(vec![("gx_region".into(), "pal".into())]);
        let strings: Vec<CString> = [
            "gx_region",
            "Region",
            "auto",
            "ntsc",
            "pal",
            "gx_blur",
            "Blur",
            "off",
            "on",
        ]
        .iter()
        .map(|text| CString::new(*text).unwrap())
        .collect();
        let mut region_values = no_values();
        for (slot, text) in region_values.iter_mut().zip(&strings[2..5]) {
            slot.value = text.as_ptr();
        }
        let mut blur_values = no_values();
        for (slot, text) in blur_values.iter_mut().zip(&strings[7..9]) {
            slot.value = text.as_ptr();
        }
        let definition = |key: *const c_char, desc: *const c_char, values, default| {
            ffi::RetroCoreOptionV2Definition {
                key,
                desc,
                desc_categorized: null(),
                info: null(),
                info_categorized: null(),
                category_key: null(),
                values,
                default_value: default,
            }
        };
        let definitions = [
            definition(
                strings[0].as_ptr(),
                strings[1].as_ptr(),
                region_values,
                strings[2].as_ptr(),
            ),
            definition(
                strings[5].as_ptr(),
                strings[6].as_ptr(),
                blur_values,
                strings[8].as_ptr(),
            ),
            definition(null(), null(), no_values(), null()),
        ];
        let mut options = ffi::RetroCoreOptionsV2 {
            categories: null(),
            definitions: definitions.as_ptr(),
        };
        let mut us = ffi::RetroCoreOptionsV2Intl {
            us: &mut options,
            local: null(),
        };
        let mut version: c_uint = 0;
        assert!(send(
            &mut context,
            env::GET_CORE_OPTIONS_VERSION,
            &mut version
        ));
        assert_eq!(version, 2);
        assert!(send(&mut context, env::SET_CORE_OPTIONS_V2_INTL, &mut us));
        assert_eq!(
            get_variable(&mut context, &strings[0]).as_deref(),
            Some("pal")
        );
        assert_eq!(
            get_variable(&mut context, &strings[5]).as_deref(),
            Some("on")
        );
        let mut updated = true;
        assert!(send(&mut context, env::GET_VARIABLE_UPDATE, &mut updated));
        assert!(!updated, "declared options are not an update");
        assert_eq!(
            context.options.options()[0].values,
            vec!["auto", "ntsc", "pal"]
        );
        assert!(context.options.validate_overrides("Test").is_ok());
    }

    #[test]
    fn v1_options_keep_their_help_text() {
        let mut context = context_with(vec![]);
        let strings: Vec<CString> = ["gx_blur", "Blur", "Softens the picture", "off"]
            .iter()
            .map(|text| CString::new(*text).unwrap())
            .collect();
        let mut values = no_values();
        values[0].value = strings[3].as_ptr();
        let mut definitions = [
            ffi::RetroCoreOptionDefinition {
                key: strings[0].as_ptr(),
                desc: strings[1].as_ptr(),
                info: strings[2].as_ptr(),
                values,
                default_value: strings[3].as_ptr(),
            },
            ffi::RetroCoreOptionDefinition {
                key: null(),
                desc: null(),
                info: null(),
                values: no_values(),
                default_value: null(),
            },
        ];
        // SET_CORE_OPTIONS takes the array itself.
        assert!(send(&mut context, env::SET_CORE_OPTIONS, &mut definitions));
        let blur = &context.options.options()[0];
        assert_eq!(
            (blur.key.as_str(), blur.current.as_str()),
            ("gx_blur", "off")
        );
        assert_eq!(blur.info, "Softens the picture");
        assert_eq!(blur.category, None);
    }

    #[test]
    fn v2_options_keep_their_help_text_and_categories_for_menus() {
        let mut context = context_with(vec![]);
        let strings: Vec<CString> = [
            "gx_region",
            "Region",
            "Which console the game expects",
            "system",
            "System",
            "The console's settings",
            "auto",
        ]
        .iter()
        .map(|text| CString::new(*text).unwrap())
        .collect();
        let mut values = no_values();
        values[0].value = strings[6].as_ptr();
        let end = || ffi::RetroCoreOptionV2Definition {
            key: null(),
            desc: null(),
            desc_categorized: null(),
            info: null(),
            info_categorized: null(),
            category_key: null(),
            values: no_values(),
            default_value: null(),
        };
        let definitions = [
            ffi::RetroCoreOptionV2Definition {
                key: strings[0].as_ptr(),
                desc: strings[1].as_ptr(),
                info: strings[2].as_ptr(),
                category_key: strings[3].as_ptr(),
                values,
                ..end()
            },
            end(),
        ];
        let categories = [
            ffi::RetroCoreOptionV2Category {
                key: strings[3].as_ptr(),
                desc: strings[4].as_ptr(),
                info: strings[5].as_ptr(),
            },
            ffi::RetroCoreOptionV2Category {
                key: null(),
                desc: null(),
                info: null(),
            },
        ];
        let mut options = ffi::RetroCoreOptionsV2 {
            categories: categories.as_ptr(),
            definitions: definitions.as_ptr(),
        };
        assert!(send(&mut context, env::SET_CORE_OPTIONS_V2, &mut options));
        let region = &context.options.options()[0];
        assert_eq!(region.info, "Which console the game expects");
        assert_eq!(region.category.as_deref(), Some("system"));
        let category = &context.options.categories()[0];
        assert_eq!(
            (category.key.as_str(), category.description.as_str()),
            ("system", "System")
        );
        assert_eq!(category.info, "The console's settings");
    }

    #[test]
    fn the_savestate_context_is_the_loops_only_inside_a_savestate_call() {
        let mut context = context_with(vec![]);
        let command = env::GET_SAVESTATE_CONTEXT | ffi::RETRO_ENVIRONMENT_EXPERIMENTAL;
        let mut answered: i32 = -1;
        let cases = [
            (SavestateContext::Netplay, true, 3),
            (SavestateContext::Rollback, true, 1),
            (SavestateContext::Normal, true, 0),
            // RetroArch answers NORMAL outside its special savestates.
            (SavestateContext::Netplay, false, 0),
        ];
        for (loop_context, in_call, expected) in cases {
            context.savestate_context = loop_context;
            context.in_savestate_call = in_call;
            assert!(send(&mut context, command, &mut answered));
            assert_eq!(answered, expected, "{loop_context:?}, in a call: {in_call}");
        }
        // SAFETY: NULL is how cores ask whether the command is supported.
        let supported = unsafe { handle(&mut context, command, std::ptr::null_mut()) };
        assert!(supported);
    }

    #[test]
    fn the_experimental_flag_is_ignored_when_matching_commands() {
        let mut context = context_with(vec![]);
        let mut bitmasks = false;
        assert!(send(
            &mut context,
            env::GET_INPUT_BITMASKS | ffi::RETRO_ENVIRONMENT_EXPERIMENTAL,
            &mut bitmasks
        ));
        assert!(bitmasks);
    }

    #[test]
    fn audio_and_video_are_enabled_but_video_only_for_rendered_frames() {
        let mut context = context_with(vec![]);
        let mut enabled: i32 = 0;
        assert!(send(
            &mut context,
            env::GET_AUDIO_VIDEO_ENABLE,
            &mut enabled
        ));
        assert_eq!(enabled, 0b11);
        context.render_video = false;
        assert!(send(
            &mut context,
            env::GET_AUDIO_VIDEO_ENABLE,
            &mut enabled
        ));
        assert_eq!(enabled, 0b10);
        // A frame run ahead of the one shown is not heard.
        context.play_audio = false;
        context.render_video = true;
        assert!(send(
            &mut context,
            env::GET_AUDIO_VIDEO_ENABLE,
            &mut enabled
        ));
        assert_eq!(enabled, 0b01);
    }

    #[test]
    fn the_three_libretro_pixel_formats_are_accepted_and_others_refused() {
        let mut context = context_with(vec![]);
        let mut format = ffi::RETRO_PIXEL_FORMAT_XRGB8888;
        assert!(send(&mut context, env::SET_PIXEL_FORMAT, &mut format));
        assert_eq!(context.pixel_format, PixelFormat::Xrgb8888);
        let mut unknown: i32 = 7;
        assert!(!send(&mut context, env::SET_PIXEL_FORMAT, &mut unknown));
        assert_eq!(context.pixel_format, PixelFormat::Xrgb8888);
    }

    #[test]
    fn directories_and_the_username_are_answered_from_the_config() {
        let mut context = context_with(vec![]);
        let mut answer: *const c_char = null();
        assert!(send(&mut context, env::GET_SAVE_DIRECTORY, &mut answer));
        // SAFETY: the host answered one of its own NUL-terminated strings.
        assert_eq!(unsafe { CStr::from_ptr(answer) }.to_str(), Ok("/save-dir"));
        assert!(send(&mut context, env::GET_SYSTEM_DIRECTORY, &mut answer));
        // SAFETY: as above.
        assert_eq!(unsafe { CStr::from_ptr(answer) }.to_str(), Ok("/sys-dir"));
        assert!(send(&mut context, env::GET_USERNAME, &mut answer));
        // SAFETY: as above.
        assert_eq!(unsafe { CStr::from_ptr(answer) }.to_str(), Ok("player"));
    }

    #[test]
    fn memory_maps_and_quirks_are_recorded() {
        let mut context = context_with(vec![]);
        let ram = [0u8; 16];
        let name = CString::new("WRAM").unwrap();
        let descriptors = [ffi::RetroMemoryDescriptor {
            flags: 0,
            ptr: ram.as_ptr() as *mut c_void,
            offset: 4,
            start: 0xff0000,
            select: 0,
            disconnect: 0,
            len: 12,
            addrspace: name.as_ptr(),
        }];
        let mut map = ffi::RetroMemoryMap {
            descriptors: descriptors.as_ptr(),
            num_descriptors: 1,
        };
        assert!(send(&mut context, env::SET_MEMORY_MAPS, &mut map));
        let recorded = &context.memory_descriptors[0];
        assert_eq!(
            (recorded.start, recorded.len, recorded.offset),
            (0xff0000, 12, 4)
        );
        assert_eq!(recorded.addrspace, "WRAM");
        let mut quirks: u64 = 1 << 6;
        assert!(send(
            &mut context,
            env::SET_SERIALIZATION_QUIRKS,
            &mut quirks
        ));
        assert_eq!(context.serialization_quirks, 1 << 6);
    }

    #[test]
    fn an_unknown_command_is_refused_and_remembered_once() {
        let mut context = context_with(vec![]);
        let mut anything = 0u64;
        assert!(!send(&mut context, 9999, &mut anything));
        assert!(!send(&mut context, 9999, &mut anything));
        assert_eq!(context.unknown_commands.len(), 1);
        // A NULL pointer where an answer is expected is refused, not written.
        // SAFETY: NULL is handled before any access.
        assert!(!unsafe { handle(&mut context, env::GET_CAN_DUPE, std::ptr::null_mut()) });
    }
}
