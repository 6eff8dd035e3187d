#pragma once
// The OpenMP spin-wait of the engine tools. libgomp's default (GOMP_SPINCOUNT 300,000 pauses)
// assumes the process has its cores to itself; where other busy processes share them, a kernel's
// threads spin while the one they wait for is descheduled and decode collapses. A short spin
// measured better for a one-off run on shared cores (docs/cli.md), so the tools use it unless the
// environment says otherwise.
//
// libgomp reads the variable once, in its initialiser, and libc's own initialiser resets the
// environment a program sets before it, so the only way in is to run the program again with the
// variable set. The object library izwi_cli_spin_policy does that from the executable's
// .preinit_array: after the shared libraries are mapped but before any of their initialisers run
// (libtorch's register its operators), so the first start costs the mapping alone. Linking it is
// the whole use; nothing is called.

namespace izwi::cli {

/// The GOMP_SPINCOUNT the tools run with unless GOMP_SPINCOUNT or OMP_WAIT_POLICY is set.
constexpr const char* kToolSpinCount = "1000";

}  // namespace izwi::cli
