// Cores written in C++ may let an exception escape their C entry points
// (Stella's retro_unserialize throws std::ios_base::failure on a state it
// cannot read). Rust cannot catch a foreign exception: one that reached
// netcade's frames would end the process, and unwinding past the core could
// unload it while the exception still points into it. Every call into a
// core goes through this one function instead, which stops the exception
// at the core's edge and names it.
#include <cstddef>
#include <cstring>
#include <exception>

namespace {
void copy_text(const char *text, char *out, std::size_t capacity) {
    if (capacity == 0) {
        return;
    }
    std::strncpy(out, text, capacity - 1);
    out[capacity - 1] = '\0';
}
}  // namespace

// Calls `body(context)`. Returns 0 if it returned, 1 if it threw; then
// `message` holds what the exception said (its what(), cut to `capacity`
// bytes with the NUL), or is empty for an exception of another kind.
extern "C" int netcade_call_catching(void (*body)(void *), void *context, char *message,
                                     std::size_t capacity) noexcept {
    if (capacity > 0) {
        message[0] = '\0';
    }
    try {
        body(context);
        return 0;
    } catch (const std::exception &exception) {
        copy_text(exception.what(), message, capacity);
        return 1;
    } catch (...) {
        return 1;
    }
}
