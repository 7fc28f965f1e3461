//! Answers to the environment commands a core sends (`retro_environment_t`).
//!
//! Each command's `data` is read and written only as the type libretro.h
//! defines for it. Unknown commands answer false and are logged once each.

use super::context::{c_str, CoreContext};
use super::core::{AvInfo, InputDescriptor, MemoryDescriptor};
use super::ffi::{self, env};
use super::options::parse_legacy_variable;
use crate::emulator::PixelFormat;
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
                    log: super::context::log_callback,
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
            env::GET_VARIABLE_UPDATE => answer(data, context.options.take_updated()),
            env::SET_SUPPORT_NO_GAME => {
                if data.is_null() {
                    return false;
                }
                context.support_no_game = *(data as *const bool);
                true
            }
            env::GET_AUDIO_VIDEO_ENABLE => {
                let video = if context.render_video {
                    AV_ENABLE_VIDEO
                } else {
                    0
                };
                answer(data, video | AV_ENABLE_AUDIO)
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

/// # Safety
/// `definitions` is NULL or points to an array of v1 definitions terminated
/// by a NULL key.
unsafe fn set_core_options_v1(
    context: &mut CoreContext,
    definitions: *const ffi::RetroCoreOptionDefinition,
) -> bool {
    if definitions.is_null() {
        return false;
    }
    let mut declared = Vec::new();
    for index in 0..MAX_ARRAY_ENTRIES {
        // SAFETY: the array continues until the NULL-key terminator.
        let definition = unsafe { &*definitions.add(index) };
        if definition.key.is_null() {
            break;
        }
        declared.push((
            lossy(definition.key),
            lossy(definition.desc),
            option_values(&definition.values),
            (!definition.default_value.is_null()).then(|| lossy(definition.default_value)),
        ));
    }
    context.options.declare(declared);
    true
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
    let definitions = unsafe { (*options).definitions };
    if definitions.is_null() {
        return false;
    }
    let mut declared = Vec::new();
    for index in 0..MAX_ARRAY_ENTRIES {
        // SAFETY: the array continues until the NULL-key terminator.
        let definition = unsafe { &*definitions.add(index) };
        if definition.key.is_null() {
            break;
        }
        declared.push((
            lossy(definition.key),
            lossy(definition.desc),
            option_values(&definition.values),
            (!definition.default_value.is_null()).then(|| lossy(definition.default_value)),
        ));
    }
    context.options.declare(declared);
    true
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
    match context.options.value_for(key.to_bytes()) {
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
