//! Compiles netcade's two small shims: in C the printf-style log callback
//! libretro cores call (stable Rust cannot define C-variadic functions), in
//! C++ the one function every call into a core goes through, which stops a
//! C++ exception at the core's edge (Rust cannot catch one).

fn main() {
    println!("cargo:rerun-if-changed=src/log_shim.c");
    println!("cargo:rerun-if-changed=src/catch_shim.cpp");
    cc::Build::new()
        .file("src/log_shim.c")
        .warnings(true)
        .compile("netcade_log_shim");
    cc::Build::new()
        .cpp(true)
        .file("src/catch_shim.cpp")
        .warnings(true)
        .compile("netcade_catch_shim");
}
