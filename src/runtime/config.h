// Compiler helpers shared by the runtime and the generated wrappers.
#pragma once

#define TSMPI_LIKELY(x) __builtin_expect(!!(x), 1)
#define TSMPI_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TSMPI_EXPORT __attribute__((visibility("default")))
// LD_PRELOAD libraries are loaded at startup, so their TLS can live in the static block:
// a thread-local read is then one %fs-relative load, no __tls_get_addr call.
#define TSMPI_TLS __attribute__((tls_model("initial-exec"))) thread_local
