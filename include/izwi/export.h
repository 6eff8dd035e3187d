#pragma once
/// @file export.h
/// IZWI_API marks what the shared library exports: the library is built with hidden visibility,
/// so everything else (the engine's internals, the bundled third-party code) stays private and
/// cannot clash with the host program's symbols.

/// Exported from the shared library (see the file's description).
#if defined(_WIN32)
#define IZWI_API
#else
#define IZWI_API __attribute__((visibility("default")))
#endif
