/// @file
/// FOLSOM_EXPORT marks the declarations that make up libfolsom's public API. The library is
/// compiled with hidden visibility (-fvisibility=hidden), so a shared libfolsom exports what is
/// marked and nothing it only uses inside; tests/install/check_exported_symbols lists what it
/// exports. Marked: the classes and free functions declared in include/folsom whose code is
/// in the library. Templates and inline functions need no mark (they are compiled where used).
/// A declaration left unmarked is a link error for programs using a shared libfolsom (an
/// undefined reference), never a run-time one.
///
/// Thread-safety: a macro only; nothing here runs.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
/// Gives a declaration default visibility: exported from a shared libfolsom.
#define FOLSOM_EXPORT __attribute__((visibility("default")))
#else
#define FOLSOM_EXPORT
#endif
