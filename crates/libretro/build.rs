//! Compiles the one piece of C in netcade: the printf-style log callback
//! libretro cores call (stable Rust cannot define C-variadic functions).

fn main() {
    println!("cargo:rerun-if-changed=src/log_shim.c");
    cc::Build::new()
        .file("src/log_shim.c")
        .warnings(true)
        .compile("netcade_log_shim");
}
