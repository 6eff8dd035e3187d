#pragma once
// The OpenMP spin-wait of the engine tools. libgomp's default (GOMP_SPINCOUNT 300,000 pauses)
// assumes the process has its cores to itself; where other busy processes share them, a kernel's
// threads spin while the one they wait for is descheduled and decode collapses. A short spin
// measured better for a one-off run on shared cores (docs/cli.md), so the tools use it unless the
// environment says otherwise. libgomp reads the variable once, when it loads, before main: the
// only way to set it for this process is to run the program again with it set.

namespace izwi::cli {

/// The GOMP_SPINCOUNT the tools run with unless GOMP_SPINCOUNT or OMP_WAIT_POLICY is set.
constexpr const char* kToolSpinCount = "1000";

/// Call first in main. Unless GOMP_SPINCOUNT or OMP_WAIT_POLICY is set, re-executes this program
/// (/proc/self/exe, the same `argv`) once with GOMP_SPINCOUNT=kToolSpinCount; the re-executed
/// program finds it set and carries on. Where the re-exec fails it returns and the program runs
/// with libgomp's default.
void use_shared_core_spin_policy(char** argv);

}  // namespace izwi::cli
