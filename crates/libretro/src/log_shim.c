/* The libretro log callback is C-variadic (printf-style), which stable Rust
 * cannot define. This shim is the callback netcade hands to cores: it formats
 * the line with vsnprintf and passes the finished text to Rust. */
#include <stdarg.h>
#include <stdio.h>

/* Defined in crates/libretro/src/context.rs; never unwinds. */
extern void netcade_core_log_line(unsigned level, const char *text);

void netcade_core_log_printf(unsigned level, const char *format, ...) {
    char line[2048];
    va_list args;
    if (format == NULL) {
        return;
    }
    va_start(args, format);
    /* Long lines are cut at the buffer's end; vsnprintf always terminates. */
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    netcade_core_log_line(level, line);
}
